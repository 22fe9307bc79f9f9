// "Your model" in the experiment form (docs/your-model.md): a TorchScript file picked
// by the user and checked at once against the experiment it is for (ModelProbe, on a worker): the
// inputs the task gives it (n × 1 × 28 × 28), the features or energies it returns, and its
// parameters; or the full error, in a box it can be copied from. Two modes, set by the preset: a
// backbone for the backbone + last-layer methods, or an ICNN for the energy models, whose
// parameters the user ticks as the non-negative ones. While the check runs, or when it failed,
// the box says why Start is off (blockReason).
#pragma once
#include <QGroupBox>
#include <QStringList>
#include <nlohmann/json.hpp>

#include "model_probe.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace liftlab {

class ModelFileBox : public QGroupBox {
    Q_OBJECT
public:
    enum class Mode { Hidden, Backbone, Icnn };
    explicit ModelFileBox(QWidget* parent = nullptr);

    void setMode(Mode mode);
    Mode mode() const { return mode_; }
    // The experiment the model is for (the form's preset or opened run): a picked file is
    // checked against its task again.
    void setExperiment(const nlohmann::json& spec);
    // Loads and checks `path` (empty: the preset's built-in model).
    void setPath(const QString& path);
    QString path() const;
    // "file" (the file's weights) or "reset" (re-initialised from the seed).
    void setInit(const QString& init);
    QString init() const;
    // True once the file passed its check (parameters listed).
    bool loaded() const { return !names_.isEmpty() && error_.isEmpty(); }
    // The check is still going on.
    bool reading() const { return reading_; }
    void cancelCheck();
    // Why the file was refused, in full ("" when it was not).
    QString error() const { return error_; }
    // The check's findings: the task's input shape and what forward returned.
    QString inputShape() const { return result_.inputShape; }
    QString found() const { return result_.found; }
    qint64 featureDim() const { return result_.featureDim; }
    QStringList parameterNames() const { return names_; }
    void setConstrained(const QStringList& names);
    QStringList constrained() const;
    // Why Start cannot run the form with this model ("" when it can): the check is going on,
    // failed, or (an ICNN) no parameter is ticked.
    QString blockReason() const;

    // Writes the model into the spec (nothing without a file). False, with `error`, when the
    // file was refused or is still being checked, or for an ICNN without a ticked parameter.
    bool apply(nlohmann::json& spec, QString* error) const;

Q_SIGNALS:
    // The check ended (passed, refused or cancelled): the findings or the error are shown.
    void inspected();
    // blockReason() may have changed.
    void readinessChanged();

private:
    void inspect(const QString& path);
    void showResult(const ModelProbeResult& result);
    void showError(const QString& error);

    Mode mode_ = Mode::Hidden;
    QLineEdit* pathEdit_ = nullptr;
    QComboBox* initCombo_ = nullptr;
    QLabel* status_ = nullptr;
    QToolButton* cancel_ = nullptr;
    QPlainTextEdit* errorText_ = nullptr;
    QPushButton* copyError_ = nullptr;
    QLabel* hint_ = nullptr;
    QListWidget* parameters_ = nullptr;
    ModelProbe* probe_ = nullptr;
    nlohmann::json experiment_;
    ModelProbeResult result_;
    QStringList names_;
    QString error_;
    QString checked_;  // the file the shown result is of
    bool reading_ = false;
    bool cancelled_ = false;  // the last check was cancelled
};

}  // namespace liftlab
