#include "model_file_box.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace liftlab {

ModelFileBox::ModelFileBox(QWidget* parent)
    : QGroupBox(tr("Your model (TorchScript)"), parent), probe_(new ModelProbe(this)) {
    setObjectName(QStringLiteral("modelFileBox"));
    auto* column = new QVBoxLayout(this);
    auto* row = new QHBoxLayout;
    pathEdit_ = new QLineEdit(this);
    pathEdit_->setObjectName(QStringLiteral("modelPath"));
    pathEdit_->setPlaceholderText(tr("built-in model"));
    auto* browse = new QToolButton(this);
    browse->setObjectName(QStringLiteral("modelBrowse"));
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Pick a TorchScript file"));
    auto* clear = new QToolButton(this);
    clear->setObjectName(QStringLiteral("modelClear"));
    clear->setText(QStringLiteral("×"));
    clear->setToolTip(tr("Back to the built-in model"));
    row->addWidget(pathEdit_, 1);
    row->addWidget(browse);
    row->addWidget(clear);
    column->addLayout(row);
    initCombo_ = new QComboBox(this);
    initCombo_->setObjectName(QStringLiteral("modelInit"));
    initCombo_->addItem(tr("the file's weights"), QStringLiteral("file"));
    initCombo_->addItem(tr("re-initialised from the seed"), QStringLiteral("reset"));
    auto* form = new QFormLayout;
    form->addRow(tr("Start from"), initCombo_);
    column->addLayout(form);
    auto* statusRow = new QHBoxLayout;
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("modelStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    cancel_ = new QToolButton(this);
    cancel_->setObjectName(QStringLiteral("modelCancel"));
    cancel_->setText(tr("Cancel"));
    cancel_->setToolTip(tr("Stop checking the file"));
    cancel_->setVisible(false);
    statusRow->addWidget(status_, 1);
    statusRow->addWidget(cancel_, 0, Qt::AlignTop);
    column->addLayout(statusRow);
    // The whole error, wrapped, selectable and copyable (a status line would cut it off).
    errorText_ = new QPlainTextEdit(this);
    errorText_->setObjectName(QStringLiteral("modelError"));
    errorText_->setReadOnly(true);
    errorText_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    errorText_->setMaximumHeight(130);
    errorText_->setStyleSheet(QStringLiteral("QPlainTextEdit { color: #b00020; }"));
    errorText_->setToolTip(tr("Why the file was refused, in full; select or Copy it"));
    errorText_->setVisible(false);
    column->addWidget(errorText_);
    copyError_ = new QPushButton(tr("Copy the message"), this);
    copyError_->setObjectName(QStringLiteral("modelCopyError"));
    copyError_->setVisible(false);
    column->addWidget(copyError_, 0, Qt::AlignRight);
    hint_ = new QLabel(tr("Tick the non-negative weights (those that make E convex):"), this);
    hint_->setWordWrap(true);
    column->addWidget(hint_);
    parameters_ = new QListWidget(this);
    parameters_->setObjectName(QStringLiteral("modelParameters"));
    parameters_->setMaximumHeight(150);
    column->addWidget(parameters_);

    connect(browse, &QToolButton::clicked, this, [this] {
        const QString file =
            QFileDialog::getOpenFileName(this, tr("TorchScript model"), pathEdit_->text(),
                                         tr("TorchScript (*.pt *.pth *.ptl *.zip);;All files (*)"));
        if (!file.isEmpty()) setPath(file);
    });
    connect(clear, &QToolButton::clicked, this, [this] { setPath(QString()); });
    connect(pathEdit_, &QLineEdit::editingFinished, this, [this] {
        if (path() != checked_) inspect(path());
    });
    connect(cancel_, &QToolButton::clicked, this, &ModelFileBox::cancelCheck);
    connect(copyError_, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(error_); });
    connect(probe_, &ModelProbe::finished, this, &ModelFileBox::showResult);
    connect(parameters_, &QListWidget::itemChanged, this, &ModelFileBox::readinessChanged);
    setPath(QString());
    setMode(Mode::Hidden);
}

void ModelFileBox::setMode(Mode mode) {
    const bool changed = mode != mode_;
    mode_ = mode;
    setVisible(mode != Mode::Hidden);
    const bool icnn = mode == Mode::Icnn;
    setTitle(icnn ? tr("Your ICNN (TorchScript)") : tr("Your backbone (TorchScript)"));
    setToolTip(icnn ? tr("forward(x) returns the energy E(x) of each row of x (n × d)")
                    : tr("forward(x) returns the features of a batch of the task's inputs "
                         "(n × d); the last layer is the method's"));
    const QString key = icnn ? QStringLiteral("icnn") : QStringLiteral("backbone");
    pathEdit_->setToolTip(
        tr("spec key %1.script%2 — default: empty, the preset's built-in model. A file saved by "
           "torch.jit.script(model).save(path); checked against the task's inputs when picked")
            .arg(key, icnn ? QString() : tr(" (with %1.kind = torchscript)").arg(key)));
    initCombo_->setToolTip(tr("spec key %1.init — default: file (the file's weights); reset: "
                              "re-initialised from each seed")
                               .arg(key));
    parameters_->setToolTip(icnn ? tr("spec key icnn.constrained — default: none ticked. The "
                                      "parameters kept non-negative (the weights that make E "
                                      "convex)")
                                 : tr("The file's parameters, all trained (not a spec key) — "
                                      "default: the file's own weights"));
    hint_->setVisible(icnn && loaded());
    parameters_->setVisible(loaded());
    for (int i = 0; i < parameters_->count(); ++i) {
        auto* item = parameters_->item(i);
        item->setFlags(icnn ? item->flags() | Qt::ItemIsUserCheckable
                            : item->flags() & ~Qt::ItemIsUserCheckable);
        if (!icnn)
            item->setData(Qt::CheckStateRole, QVariant());
        else if (!item->data(Qt::CheckStateRole).isValid())
            item->setCheckState(Qt::Unchecked);
    }
    // A backbone and an ICNN are checked differently: a picked file is checked again.
    if (changed && mode != Mode::Hidden && !path().isEmpty()) inspect(path());
}

void ModelFileBox::setExperiment(const nlohmann::json& spec) {
    const bool sameTask =
        experiment_.is_object() && spec.is_object() &&
        experiment_.value("task", nlohmann::json()) == spec.value("task", nlohmann::json());
    experiment_ = spec;
    if (!sameTask && mode_ != Mode::Hidden && !path().isEmpty()) inspect(path());
}

void ModelFileBox::setPath(const QString& path) {
    pathEdit_->setText(path);
    inspect(path);
}

QString ModelFileBox::path() const {
    return pathEdit_->text().trimmed();
}

void ModelFileBox::setInit(const QString& init) {
    const int index = initCombo_->findData(init);
    if (index >= 0) initCombo_->setCurrentIndex(index);
}

QString ModelFileBox::init() const {
    return initCombo_->currentData().toString();
}

void ModelFileBox::cancelCheck() {
    if (!reading_) return;
    probe_->cancel();
    reading_ = false;
    cancel_->setVisible(false);
    showError(tr("The check of %1 was cancelled; pick the file again (or press Enter in the "
                 "path) to check it.")
                  .arg(path()));
    cancelled_ = true;
    Q_EMIT inspected();
    Q_EMIT readinessChanged();
}

void ModelFileBox::inspect(const QString& path) {
    names_.clear();
    error_.clear();
    cancelled_ = false;
    result_ = ModelProbeResult();
    checked_ = path;
    parameters_->clear();
    parameters_->setVisible(false);
    hint_->setVisible(false);
    errorText_->setVisible(false);
    copyError_->setVisible(false);
    initCombo_->setEnabled(!path.isEmpty());
    status_->setStyleSheet(QString());
    if (path.isEmpty() || mode_ == Mode::Hidden) {
        probe_->cancel();
        reading_ = false;
        cancel_->setVisible(false);
        status_->setText(path.isEmpty() ? tr("The preset's built-in model.") : QString());
        Q_EMIT inspected();
        Q_EMIT readinessChanged();
        return;
    }
    reading_ = true;
    cancel_->setVisible(true);
    status_->setText(tr("Checking %1 on the task's inputs …").arg(QFileInfo(path).fileName()));
    probe_->start({path, mode_ == Mode::Icnn, experiment_});
    Q_EMIT readinessChanged();
}

void ModelFileBox::showError(const QString& error) {
    error_ = error;
    status_->setText(tr("Refused — Start is off until another file is picked:"));
    status_->setStyleSheet(QStringLiteral("color: #b00020; font-weight: bold;"));
    errorText_->setPlainText(error);
    errorText_->setVisible(true);
    copyError_->setVisible(true);
}

void ModelFileBox::showResult(const ModelProbeResult& result) {
    reading_ = false;
    cancel_->setVisible(false);
    result_ = result;
    if (result.cancelled) {
        showError(tr("The check of %1 was cancelled.").arg(path()));
    } else if (!result.ok) {
        showError(result.error);
        if (!result.inputShape.isEmpty())
            status_->setText(tr("Refused (the task's inputs are %1) — Start is off until another "
                                "file is picked:")
                                 .arg(result.inputShape));
    } else {
        names_ = result.names;
        status_->setText(tr("Accepted: inputs %1 → %2 · %3")
                             .arg(result.inputShape, result.found,
                                  names_.size() == 1
                                      ? tr("1 parameter tensor")
                                      : tr("%1 parameter tensors").arg(names_.size())));
        status_->setStyleSheet(QStringLiteral("color: #1e7b34;"));
        for (int i = 0; i < names_.size(); ++i) {
            auto* item = new QListWidgetItem(
                QStringLiteral("%1   [%2]").arg(names_[i], result.shapes.value(i)), parameters_);
            item->setData(Qt::UserRole, names_[i]);
        }
        setMode(mode_);
    }
    Q_EMIT inspected();
    Q_EMIT readinessChanged();
}

void ModelFileBox::setConstrained(const QStringList& names) {
    for (int i = 0; i < parameters_->count(); ++i) {
        auto* item = parameters_->item(i);
        item->setCheckState(names.contains(item->data(Qt::UserRole).toString()) ? Qt::Checked
                                                                                : Qt::Unchecked);
    }
}

QStringList ModelFileBox::constrained() const {
    QStringList out;
    for (int i = 0; i < parameters_->count(); ++i) {
        const auto* item = parameters_->item(i);
        if (item->checkState() == Qt::Checked) out << item->data(Qt::UserRole).toString();
    }
    return out;
}

QString ModelFileBox::blockReason() const {
    if (mode_ == Mode::Hidden || path().isEmpty()) return QString();
    const QString name = QFileInfo(path()).fileName();
    if (reading_) return tr("checking %1 …").arg(name);
    if (cancelled_) return tr("the check of %1 was cancelled; pick it again").arg(name);
    if (!error_.isEmpty()) return tr("%1 was refused (the message is in the model box)").arg(name);
    if (mode_ == Mode::Icnn && constrained().isEmpty())
        return tr("tick the non-negative parameters of %1").arg(name);
    return QString();
}

bool ModelFileBox::apply(nlohmann::json& spec, QString* error) const {
    if (mode_ == Mode::Hidden || path().isEmpty()) return true;
    if (!error_.isEmpty()) {
        *error = tr("Your model: %1").arg(error_);
        return false;
    }
    if (!loaded()) {
        *error = tr("Your model: %1 is still being checked.").arg(path());
        return false;
    }
    const std::string init = initCombo_->currentData().toString().toStdString();
    // A recorded hash is of the file the spec named: another file drops it (the run records
    // the new file's).
    const char* block = mode_ == Mode::Backbone ? "backbone" : "icnn";
    if (spec.contains(block) && spec[block].is_object() &&
        spec[block].value("script", std::string()) != path().toStdString())
        spec[block].erase("script_sha256");
    if (mode_ == Mode::Backbone) {
        spec["backbone"]["kind"] = "torchscript";
        spec["backbone"]["script"] = path().toStdString();
        spec["backbone"]["init"] = init;
        return true;
    }
    const QStringList ticked = constrained();
    if (ticked.isEmpty()) {
        *error =
            tr("Your ICNN: tick its non-negative parameters (the weights that keep E convex).");
        return false;
    }
    nlohmann::json names = nlohmann::json::array();
    for (const auto& n : ticked) names.push_back(n.toStdString());
    spec["icnn"]["script"] = path().toStdString();
    spec["icnn"]["constrained"] = names;
    spec["icnn"]["init"] = init;
    return true;
}

}  // namespace liftlab
