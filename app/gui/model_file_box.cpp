#include "model_file_box.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPointer>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/error_text.h"
#include "nn/model_probe.h"

namespace liftlab {

namespace {

QString shapeText(const std::vector<int64_t>& shape) {
    QStringList parts;
    for (auto s : shape) parts << QString::number(s);
    return parts.isEmpty() ? QStringLiteral("scalar") : parts.join(QStringLiteral(" × "));
}

}  // namespace

ModelFileBox::ModelFileBox(QWidget* parent) : QGroupBox(tr("Your model (TorchScript)"), parent) {
    setObjectName(QStringLiteral("modelFileBox"));
    auto* column = new QVBoxLayout(this);
    auto* row = new QHBoxLayout;
    pathEdit_ = new QLineEdit(this);
    pathEdit_->setObjectName(QStringLiteral("modelPath"));
    pathEdit_->setPlaceholderText(tr("built-in model"));
    pathEdit_->setToolTip(
        tr("A file saved by torch.jit.script(model).save(path); empty: the preset's own model"));
    auto* browse = new QToolButton(this);
    browse->setObjectName(QStringLiteral("modelBrowse"));
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Pick a TorchScript file"));
    auto* clear = new QToolButton(this);
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
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("modelStatus"));
    status_->setWordWrap(true);
    column->addWidget(status_);
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
    connect(pathEdit_, &QLineEdit::editingFinished, this, [this] { inspect(path()); });
    setPath(QString());
    setMode(Mode::Hidden);
}

ModelFileBox::~ModelFileBox() {
    if (cancelReading_) *cancelReading_ = true;
}

void ModelFileBox::setMode(Mode mode) {
    mode_ = mode;
    setVisible(mode != Mode::Hidden);
    const bool icnn = mode == Mode::Icnn;
    setTitle(icnn ? tr("Your ICNN (TorchScript)") : tr("Your backbone (TorchScript)"));
    setToolTip(icnn ? tr("forward(x) returns the energy E(x) of each row of x (n × d)")
                    : tr("forward(x) returns the features of a batch of the task's inputs "
                         "(n × d); the last layer is the method's"));
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
}

void ModelFileBox::setPath(const QString& path) {
    pathEdit_->setText(path);
    inspect(path);
}

QString ModelFileBox::path() const {
    return pathEdit_->text().trimmed();
}

void ModelFileBox::inspect(const QString& path) {
    const int generation = ++generation_;
    if (cancelReading_) *cancelReading_ = true;  // the older file's child is ended at once
    cancelReading_ = std::make_shared<std::atomic<bool>>(false);
    reading_ = false;
    names_.clear();
    error_.clear();
    parameters_->clear();
    parameters_->setVisible(false);
    hint_->setVisible(false);
    initCombo_->setEnabled(!path.isEmpty());
    if (path.isEmpty()) {
        status_->setText(tr("The preset's built-in model."));
        status_->setStyleSheet(QString());
        Q_EMIT inspected();
        return;
    }
    reading_ = true;
    status_->setText(tr("Reading %1 …").arg(path));
    status_->setStyleSheet(QString());
    // Loading a TorchScript archive can take seconds for a big model, and a hostile file may
    // crash or hang LibTorch: a worker has a child process read it and hands back plain values.
    QPointer<ModelFileBox> self(this);
    const std::string file = path.toStdString();
    const auto cancel = cancelReading_;
    QThread* worker = QThread::create([self, generation, file, cancel] {
        QStringList names, shapes;
        QString error;
        try {
            for (const auto& p : inspect_torchscript_in_child(file, "model", {}, cancel.get())) {
                names << QString::fromStdString(p.name);
                shapes << shapeText(p.shape);
            }
        } catch (const ModelProbeCancelled&) {
            return;  // another file was picked, or the box is gone
        } catch (const std::exception& e) {
            error = QString::fromStdString(error_message(e));
        }
        // Back on the GUI thread (the application as context: the box may be gone by then).
        QMetaObject::invokeMethod(
            QCoreApplication::instance(),
            [self, generation, names, shapes, error] {
                if (self) self->showParameters(generation, names, shapes, error);
            },
            Qt::QueuedConnection);
    });
    connect(worker, &QThread::finished, worker, &QObject::deleteLater);
    worker->start();
}

void ModelFileBox::showParameters(int generation, const QStringList& names,
                                  const QStringList& shapes, const QString& error) {
    if (generation != generation_) return;  // the user picked another file meanwhile
    reading_ = false;
    if (!error.isEmpty()) {
        // "spec key 'model': FILE: not a TorchScript archive …" → the part after the key.
        QString text = error;
        const int colon = text.indexOf(QStringLiteral("': "));
        if (text.startsWith(QStringLiteral("spec key")) && colon > 0) text = text.mid(colon + 3);
        error_ = text;
        status_->setText(text);
        status_->setStyleSheet(QStringLiteral("color: #c0392b;"));
        Q_EMIT inspected();
        return;
    }
    names_ = names;
    status_->setText(tr("%n parameter tensor(s)", nullptr, static_cast<int>(names.size())));
    status_->setStyleSheet(QString());
    for (int i = 0; i < names.size(); ++i) {
        auto* item =
            new QListWidgetItem(QStringLiteral("%1   [%2]").arg(names[i], shapes[i]), parameters_);
        item->setData(Qt::UserRole, names[i]);
    }
    setMode(mode_);
    Q_EMIT inspected();
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

bool ModelFileBox::apply(nlohmann::json& spec, QString* error) const {
    if (mode_ == Mode::Hidden || path().isEmpty()) return true;
    if (!error_.isEmpty()) {
        *error = tr("Your model: %1").arg(error_);
        return false;
    }
    if (!loaded()) {
        *error = tr("Your model: %1 is still being read.").arg(path());
        return false;
    }
    const std::string init = initCombo_->currentData().toString().toStdString();
    if (mode_ == Mode::Backbone) {
        // The preset's backbone.freeze goes with the file (cf-linear-probe: a frozen backbone,
        // whichever the user brings).
        nlohmann::json backbone = {
            {"kind", "torchscript"}, {"script", path().toStdString()}, {"init", init}};
        if (spec.contains("backbone") && spec["backbone"].is_object() &&
            spec["backbone"].contains("freeze"))
            backbone["freeze"] = spec["backbone"]["freeze"];
        spec["backbone"] = backbone;
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
