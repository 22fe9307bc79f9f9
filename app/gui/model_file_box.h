// "Your model" in the experiment form (docs/your-model.md): a TorchScript file picked
// by the user, read on a worker thread (a big file never blocks the window) by a child process
// (engine/nn/model_probe.h: a file that crashes or hangs LibTorch is only refused), its parameters
// listed. Picking another file, or closing the box, ends the reading at once. Two modes, set by the
// preset: a backbone for the backbone + last-layer methods, or an ICNN for the energy models, whose
// parameters the user ticks as the non-negative ones.
#pragma once
#include <QGroupBox>
#include <QStringList>
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>

class QComboBox;
class QLabel;
class QLineEdit;
class QListWidget;

namespace liftlab {

class ModelFileBox : public QGroupBox {
    Q_OBJECT
public:
    enum class Mode { Hidden, Backbone, Icnn };
    explicit ModelFileBox(QWidget* parent = nullptr);
    ~ModelFileBox() override;  // ends a reading under way (its child process)

    void setMode(Mode mode);
    Mode mode() const { return mode_; }
    // Loads and lists `path` (empty: the preset's built-in model).
    void setPath(const QString& path);
    QString path() const;
    // True once the file's parameters are listed (a worker reads it).
    bool loaded() const { return !names_.isEmpty(); }
    // A worker is still reading the file.
    bool reading() const { return reading_; }
    // Why the file was refused ("" when it was not).
    QString error() const { return error_; }
    QStringList parameterNames() const { return names_; }
    void setConstrained(const QStringList& names);
    QStringList constrained() const;

    // Writes the model into the spec (nothing without a file). False, with `error`, when the
    // file could not be read or, for an ICNN, no parameter is ticked.
    bool apply(nlohmann::json& spec, QString* error) const;

Q_SIGNALS:
    // The file was read (or failed to read): the list or the error is shown.
    void inspected();

private:
    void inspect(const QString& path);
    void showParameters(int generation, const QStringList& names, const QStringList& shapes,
                        const QString& error);

    Mode mode_ = Mode::Hidden;
    QLineEdit* pathEdit_ = nullptr;
    QComboBox* initCombo_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* hint_ = nullptr;
    QListWidget* parameters_ = nullptr;
    QStringList names_;
    QString error_;
    int generation_ = 0;                                // results of an older file are dropped
    std::shared_ptr<std::atomic<bool>> cancelReading_;  // of the reading under way
    bool reading_ = false;
};

}  // namespace liftlab
