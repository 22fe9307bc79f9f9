// The experiment form (left of the lab window): a preset, its methods as checkboxes, the training
// fields (batch, seeds, steps, log interval, the spec's optimizer), the hyper-parameters the
// methods read (built from the method registry, so an ICNN preset shows no closed-form λ/β), the
// user's model, the output folder and every other setting (SpecEditor). It builds a spec; it
// never starts one.
//
// The form runs exactly what it shows: it starts from a spec (a preset's, or an opened run's
// spec.json: loadRun) and every setting has one place — its own field, or a row of "All
// settings". Each field's tooltip names its spec key and the value it came with. Switching
// preset with edits in the form asks first.
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

    // Loads a built-in preset into the form (without asking); false for an unknown name.
    bool selectPreset(const QString& name);
    bool hasPreset(const QString& name) const;
    QString presetName() const;
    // Loads a run folder's spec.json into the form: preset, methods, seeds, steps, batch, log
    // interval, the user's model and its constraints, every other setting. False, with `error`
    // naming the file, when it cannot be read.
    bool loadRun(const QString& runDir, QString* error);
    // The run folder the form was loaded from ("" for a preset).
    QString loadedRun() const { return loadedRun_; }
    // Makes the form a fork of `parentDir` (loaded first with loadRun): buildSpec() adds
    // "parent" and "fork_step" = `forkStep` (the parent's latest kept state at or before
    // `requestedStep`, training/resume.h latest_fork_step), so Start runs the child as
    // `liftlab-cli run --fork DIR --from-step N` does. Loading another spec ends the fork.
    void setFork(const QString& parentDir, int forkStep, int requestedStep);
    QString forkParent() const { return forkParent_; }  // "" when the form is not a fork
    int forkStep() const { return forkStep_; }
    // In a fork: the parent's method a method it did not run starts from (spec key fork_source,
    // the "New methods start from" box, shown when the fork adds a method; "" when none is
    // chosen or none is needed). By default the one parent method of the new method's family
    // that the fork leaves out (a swap), else the parent's one method of that family.
    QString forkSource() const;
    // The methods "Add method" offers in a fork: the registry's methods this task can run that
    // the form does not hold yet.
    QStringList addableMethods() const;
    // A run folder's spec.json without what the folder records beside the spec (versions, data
    // sizes, …): the spec that runs it again. False, with `error` naming the file and key, when
    // it cannot be read or this LiftLab cannot run it.
    static bool readRunSpec(const QString& runDir, nlohmann::json* spec, QString* error);

    void setSteps(int steps);
    int steps() const;
    // Seeds as typed: "0, 1, 2" or a range "0-4". False (and nothing changed) for bad text.
    bool setSeedsText(const QString& text);
    QString seedsText() const;
    QString outputDir() const;
    void setOutputDir(const QString& dir);
    // The method checkboxes of the current spec, by label.
    QStringList methodLabels() const;
    void setMethodChecked(const QString& label, bool checked);
    SpecEditor* specEditor() const { return specEditor_; }
    // The user's TorchScript backbone or ICNN (hidden for presets that cannot take one).
    ModelFileBox* modelBox() const { return modelBox_; }
    // The description's colour for a dark or light window palette.
    void setDarkPalette(bool on);

    // The fields that differ from the spec the form was loaded with ("Steps", "Seeds", …).
    QStringList editedFields() const;
    // Why Start cannot run the form now ("" when it can): the user's model is being checked,
    // was refused, or needs its constraints ticked.
    QString startBlockReason() const;

    // The spec the form describes, and a title for it. False, with `error` saying what to fix,
    // for an invalid form or spec.
    bool buildSpec(nlohmann::json* spec, QString* title, QString* error) const;

    // The log interval "auto" picks for `steps` when the spec says `specLogEvery` over
    // `specSteps`: the spec's at its own length (or longer) or when it gives at least 10 points,
    // else steps / 10 (at least 1), so a short run still draws a curve (each log point
    // evaluates the test set: more would slow a short run on a large test set).
    static int autoLogEvery(int steps, int specSteps, int specLogEvery);
    // "0, 1, 2" or "0-4" → the seeds; false for anything else (negative, empty, not a number).
    static bool parseSeeds(const QString& text, std::vector<quint64>* seeds);

Q_SIGNALS:
    // The user finished editing the output folder.
    void outputDirEdited(const QString& dir);
    // startBlockReason() may have changed.
    void readinessChanged();
    // A new spec was loaded (a preset or a run).
    void specLoaded();

private:
    // A method hyper-parameter (methods/method_registry.h) the spec's methods read.
    struct ParameterField {
        std::string key;
        QLineEdit* edit = nullptr;
        QString initial;  // the spec's value: only an edited field overrides the methods
    };
    QWidget* buildPresetBox();
    QWidget* buildTrainingBox();
    QWidget* buildOutputBox();
    QWidget* buildAllSettingsBox();
    void onPresetChosen(int index);
    // Shows `spec` in every field; `run` is the run folder it came from ("" for a preset).
    void loadSpec(const nlohmann::json& spec, const QString& run);
    void rebuildMethodBoxes();
    void rebuildParameterFields();
    void updateLogEvery();
    void updateSeedsCount();
    void updateTooltips();
    // A method of the registry added to a fork ("Add method"): ticked, with its defaults.
    void addMethod(const QString& name);
    QCheckBox* addMethodBox(const nlohmann::json& method, int index);
    void updateForkControls();
    // The spec's methods and those added to the fork, in the form's order.
    nlohmann::json formMethods() const;
    // Ticked methods whose label the fork's parent did not run.
    QStringList newMethodLabels() const;
    const Preset* currentPreset() const;
    QString originText() const;

    QComboBox* presetCombo_ = nullptr;
    int presetIndex_ = -1;  // the combo's index the form was loaded from
    QLabel* presetDescription_ = nullptr;
    QGroupBox* methodsBox_ = nullptr;
    QVBoxLayout* methodsLayout_ = nullptr;
    QVector<QCheckBox*> methodBoxes_;
    // A fork's controls (hidden otherwise): add a method, the parent's method new ones start from,
    // and why the engine refuses the fork as the form stands.
    QWidget* addMethodRow_ = nullptr;
    QComboBox* addMethodCombo_ = nullptr;
    QWidget* forkSourceRow_ = nullptr;
    QComboBox* forkSourceCombo_ = nullptr;
    bool forkSourceChosen_ = false;  // the user picked the source: no default overrides it
    QLabel* forkProblem_ = nullptr;
    nlohmann::json added_ = nlohmann::json::array();  // methods added to the fork
    QGroupBox* parametersBox_ = nullptr;
    QFormLayout* parametersForm_ = nullptr;
    QVector<ParameterField> parameterFields_;
    QSpinBox* batchSpin_ = nullptr;
    QLineEdit* seedsEdit_ = nullptr;
    QLabel* seedsCount_ = nullptr;
    QSpinBox* stepsSpin_ = nullptr;
    QSpinBox* logEverySpin_ = nullptr;
    QCheckBox* logAutoBox_ = nullptr;
    QCheckBox* logInitialBox_ = nullptr;
    QComboBox* optimizerCombo_ = nullptr;
    QLineEdit* outDirEdit_ = nullptr;
    QCheckBox* allSettingsToggle_ = nullptr;
    SpecEditor* specEditor_ = nullptr;
    ModelFileBox* modelBox_ = nullptr;

    nlohmann::json base_;  // the spec the form was loaded with
    QString loadedRun_;
    QString forkParent_;  // setFork: the parent run folder ("" without a fork)
    int forkStep_ = 0;
    QStringList pendingConstrained_;  // an opened run's icnn.constrained, ticked once checked
    bool loading_ = false;
};

}  // namespace liftlab
