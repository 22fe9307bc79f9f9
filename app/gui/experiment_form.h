// The experiment form (left of the lab window): a preset, its methods as checkboxes, the training
// fields (batch, seed, steps, the spec's optimizer), the hyper-parameters the preset's methods read
// (built from the method registry, so an ICNN preset shows no closed-form λ/β), the output folder
// and every other setting (SpecEditor). It builds a spec; it never starts one.
#pragma once
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <nlohmann/json.hpp>
#include <string>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QVBoxLayout;

namespace liftlab {

class ModelFileBox;
class SpecEditor;
struct Preset;

class ExperimentForm : public QWidget {
    Q_OBJECT
public:
    explicit ExperimentForm(QWidget* parent = nullptr);

    // Loads a built-in preset into the form; false for an unknown name.
    bool selectPreset(const QString& name);
    bool hasPreset(const QString& name) const;
    void setSteps(int steps);
    QString outputDir() const;
    void setOutputDir(const QString& dir);
    // The method checkboxes of the current preset, by label.
    QStringList methodLabels() const;
    void setMethodChecked(const QString& label, bool checked);
    SpecEditor* specEditor() const { return specEditor_; }
    // The user's TorchScript backbone or ICNN (hidden for presets that cannot take one).
    ModelFileBox* modelBox() const { return modelBox_; }
    // The description's colour for a dark or light window palette.
    void setDarkPalette(bool on);

    // The spec the form describes, and a title for it. False, with `error` saying what to fix,
    // for an invalid form or spec.
    bool buildSpec(nlohmann::json* spec, QString* title, QString* error) const;

Q_SIGNALS:
    // The user finished editing the output folder.
    void outputDirEdited(const QString& dir);

private:
    // A method hyper-parameter (methods/method_registry.h) the preset's methods read.
    struct ParameterField {
        std::string key;
        QLineEdit* edit = nullptr;
        QString initial;  // the preset's value: only an edited field overrides the methods
    };
    QWidget* buildPresetBox();
    QWidget* buildTrainingBox();
    QWidget* buildOutputBox();
    QWidget* buildAllSettingsBox();
    void onPresetChanged(int index);
    void rebuildMethodBoxes();
    void rebuildParameterFields();
    const Preset* currentPreset() const;

    QComboBox* presetCombo_ = nullptr;
    QLabel* presetDescription_ = nullptr;
    QGroupBox* methodsBox_ = nullptr;
    QVBoxLayout* methodsLayout_ = nullptr;
    QVector<QCheckBox*> methodBoxes_;
    QGroupBox* parametersBox_ = nullptr;
    QFormLayout* parametersForm_ = nullptr;
    QVector<ParameterField> parameterFields_;
    QSpinBox* batchSpin_ = nullptr;
    QSpinBox* seedSpin_ = nullptr;
    QSpinBox* stepsSpin_ = nullptr;
    QComboBox* optimizerCombo_ = nullptr;
    QLineEdit* outDirEdit_ = nullptr;
    SpecEditor* specEditor_ = nullptr;
    ModelFileBox* modelBox_ = nullptr;
};

}  // namespace liftlab
