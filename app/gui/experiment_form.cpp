#include "experiment_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QIntValidator>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPainter>
#include <QPixmap>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "method_colors.h"
#include "methods/method_registry.h"
#include "model_file_box.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "spec_editor.h"

namespace liftlab {

namespace {

const Preset* findPreset(const QString& name) {
    for (const auto& p : builtin_presets())
        if (QString::fromStdString(p.name) == name) return &p;
    return nullptr;
}

QString methodLabel(const nlohmann::json& m) {
    return QString::fromStdString(m.value("label", m.value("name", std::string())));
}

// The registry entry of a preset's method (null for an unknown name: the spec check says so).
const MethodInfo* methodOf(const nlohmann::json& m) {
    return find_method(m.value("name", std::string()));
}

// Which model a user may bring to a preset: a backbone for the backbone + last-layer tasks, an
// ICNN for the energy models on the built-in architecture; none for DFIV and the CP-Flows.
ModelFileBox::Mode modelMode(const Preset& p) {
    const auto task = p.spec.value("task", nlohmann::json::object());
    const std::string kind = task.value("kind", TaskSpec{}.kind);
    const auto* info = find_task_kind(kind);
    if (!info) return ModelFileBox::Mode::Hidden;
    if (info->family == TaskFamily::LastLayer) return ModelFileBox::Mode::Backbone;
    const auto icnn = p.spec.value("icnn", nlohmann::json::object());
    const bool builtin = icnn.value("architecture", IcnnSpec{}.architecture) == "liftlab";
    if ((kind == "icnn-ebm-1d" || kind == "icnn-ebm-nd") && builtin)
        return ModelFileBox::Mode::Icnn;
    return ModelFileBox::Mode::Hidden;
}

bool isIcnnPreset(const Preset& p) {
    const auto* kind = find_task_kind(
        p.spec.contains("task") ? p.spec["task"].value("kind", TaskSpec{}.kind) : TaskSpec{}.kind);
    return kind && kind->family == TaskFamily::Icnn;
}

// A small colour swatch: ties a checkbox to its curve.
QIcon swatch(const QColor& color) {
    QPixmap pm(12, 12);
    pm.fill(Qt::transparent);
    QPainter p(&pm);
    p.setPen(color.darker(130));
    p.setBrush(color);
    p.drawRect(0, 0, 11, 11);
    return QIcon(pm);
}

// A number field in the C locale ("1e-3"), whatever the user's locale.
QLineEdit* numberEdit(QWidget* parent, bool integer) {
    auto* edit = new QLineEdit(parent);
    if (integer) {
        edit->setValidator(new QIntValidator(0, std::numeric_limits<int>::max(), edit));
        return edit;
    }
    auto* v = new QDoubleValidator(0.0, std::numeric_limits<double>::max(), 12, edit);
    v->setNotation(QDoubleValidator::ScientificNotation);
    v->setLocale(QLocale::c());
    edit->setValidator(v);
    return edit;
}

}  // namespace

ExperimentForm::ExperimentForm(QWidget* parent) : QWidget(parent) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(buildPresetBox());
    methodsBox_ = new QGroupBox(tr("Methods"), this);
    methodsLayout_ = new QVBoxLayout(methodsBox_);
    column->addWidget(methodsBox_);
    modelBox_ = new ModelFileBox(this);
    column->addWidget(modelBox_);
    column->addWidget(buildTrainingBox());
    parametersBox_ = new QGroupBox(tr("Method parameters"), this);
    parametersForm_ = new QFormLayout(parametersBox_);
    column->addWidget(parametersBox_);
    column->addWidget(buildOutputBox());
    column->addWidget(buildAllSettingsBox());
    connect(presetCombo_, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &ExperimentForm::onPresetChanged);
    onPresetChanged(presetCombo_->currentIndex());
}

QWidget* ExperimentForm::buildPresetBox() {
    auto* box = new QGroupBox(tr("Experiment"), this);
    auto* layout = new QVBoxLayout(box);
    presetCombo_ = new QComboBox(box);
    presetCombo_->setObjectName(QStringLiteral("preset"));
    // Both families, each under a header that cannot be selected.
    for (const bool icnn : {false, true}) {
        presetCombo_->addItem(icnn ? tr("— ICNN lifter —") : tr("— Closed-form last layer —"));
        if (auto* model = qobject_cast<QStandardItemModel*>(presetCombo_->model())) {
            QStandardItem* item = model->item(presetCombo_->count() - 1);
            item->setFlags(item->flags() & ~(Qt::ItemIsSelectable | Qt::ItemIsEnabled));
            QFont f = item->font();
            f.setItalic(true);
            item->setFont(f);
        }
        for (const auto& p : builtin_presets()) {
            if (isIcnnPreset(p) != icnn) continue;
            presetCombo_->addItem(QString::fromStdString(p.name));
            presetCombo_->setItemData(presetCombo_->count() - 1,
                                      QString::fromStdString(p.description), Qt::ToolTipRole);
        }
    }
    presetCombo_->setCurrentIndex(1);
    presetDescription_ = new QLabel(box);
    presetDescription_->setWordWrap(true);
    presetDescription_->setStyleSheet(QStringLiteral("color: #555;"));
    layout->addWidget(presetCombo_);
    layout->addWidget(presetDescription_);
    return box;
}

QWidget* ExperimentForm::buildTrainingBox() {
    auto* box = new QGroupBox(tr("Training"), this);
    auto* form = new QFormLayout(box);
    batchSpin_ = new QSpinBox(box);
    batchSpin_->setObjectName(QStringLiteral("batchSize"));
    batchSpin_->setRange(1, 1000000);
    seedSpin_ = new QSpinBox(box);
    seedSpin_->setObjectName(QStringLiteral("seed"));
    seedSpin_->setRange(0, std::numeric_limits<int>::max());
    stepsSpin_ = new QSpinBox(box);
    stepsSpin_->setObjectName(QStringLiteral("steps"));
    stepsSpin_->setRange(1, 100000000);
    stepsSpin_->setGroupSeparatorShown(true);
    optimizerCombo_ = new QComboBox(box);
    optimizerCombo_->setObjectName(QStringLiteral("optimizer"));
    for (const auto& kind : optimizer_kinds())
        optimizerCombo_->addItem(QString::fromStdString(kind));
    form->addRow(tr("Batch size"), batchSpin_);
    form->addRow(tr("Seed"), seedSpin_);
    form->addRow(tr("Steps"), stepsSpin_);
    form->addRow(tr("Optimizer"), optimizerCombo_);
    return box;
}

QWidget* ExperimentForm::buildOutputBox() {
    auto* box = new QGroupBox(tr("Output"), this);
    auto* layout = new QHBoxLayout(box);
    outDirEdit_ = new QLineEdit(QDir::current().filePath(QStringLiteral("runs")), box);
    outDirEdit_->setObjectName(QStringLiteral("outputDir"));
    outDirEdit_->setToolTip(tr("Each run writes a new folder here"));
    auto* browse = new QToolButton(box);
    browse->setText(QStringLiteral("…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Output folder"), outDirEdit_->text());
        if (!dir.isEmpty()) outDirEdit_->setText(dir);
    });
    connect(outDirEdit_, &QLineEdit::editingFinished, this,
            [this] { Q_EMIT outputDirEdited(outDirEdit_->text()); });
    layout->addWidget(outDirEdit_, 1);
    layout->addWidget(browse);
    return box;
}

QWidget* ExperimentForm::buildAllSettingsBox() {
    // A check box that opens the editor below it (closed: the line alone, no empty frame).
    auto* box = new QWidget(this);
    auto* layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* toggle = new QCheckBox(tr("All settings"), box);
    toggle->setToolTip(tr("Every setting of the preset, editable; applied over the fields above"));
    specEditor_ = new SpecEditor(box);
    specEditor_->setMinimumHeight(220);
    specEditor_->setVisible(false);
    layout->addWidget(toggle);
    layout->addWidget(specEditor_);
    connect(toggle, &QCheckBox::toggled, specEditor_, &QWidget::setVisible);
    return box;
}

const Preset* ExperimentForm::currentPreset() const {
    return findPreset(presetCombo_->currentText());
}

bool ExperimentForm::hasPreset(const QString& name) const {
    return presetCombo_->findText(name) >= 0;
}

bool ExperimentForm::selectPreset(const QString& name) {
    const int index = presetCombo_->findText(name);
    if (index < 0) return false;
    if (index == presetCombo_->currentIndex())
        onPresetChanged(index);  // reload the preset's values into the form
    else
        presetCombo_->setCurrentIndex(index);
    return true;
}

void ExperimentForm::onPresetChanged(int index) {
    const Preset* preset = findPreset(presetCombo_->itemText(index));
    if (!preset) return;
    const nlohmann::json& j = preset->spec;
    presetDescription_->setText(QString::fromStdString(preset->description));
    specEditor_->setSpec(j);
    batchSpin_->setValue(j.value("batch_size", 32));
    stepsSpin_->setValue(j.value("steps", 2000));
    const auto seeds = j.value("seeds", nlohmann::json::array({0}));
    seedSpin_->setValue(seeds.empty() ? 0 : seeds[0].get<int>());
    const std::string optimizer = j.contains("optimizer")
                                      ? j["optimizer"].value("kind", OptimizerSpec{}.kind)
                                      : OptimizerSpec{}.kind;
    optimizerCombo_->setCurrentText(QString::fromStdString(optimizer));
    // Only methods without an optimizer of their own (sgd, adam) train with the spec's.
    bool usesSpecOptimizer = false;
    for (const auto& m : j.value("methods", nlohmann::json::array()))
        if (const auto* info = methodOf(m)) usesSpecOptimizer |= info->optimizer.empty();
    optimizerCombo_->setEnabled(usesSpecOptimizer);
    optimizerCombo_->setToolTip(
        isIcnnPreset(*preset)
            ? tr("Optimizer of the ICNN and its positivity strategy")
            : tr("Backbone optimizer of the methods without one of their own (cf-*, ce, dfiv)"));

    // A preset that sweeps the batch size owns that value.
    const bool sweepsBatch =
        j.contains("sweep") && j["sweep"].value("key", std::string()) == "batch_size";
    batchSpin_->setEnabled(!sweepsBatch);
    batchSpin_->setToolTip(sweepsBatch ? tr("Swept by this preset") : QString());
    rebuildMethodBoxes();
    rebuildParameterFields();
    modelBox_->setMode(modelMode(*preset));
}

void ExperimentForm::rebuildMethodBoxes() {
    for (QCheckBox* box : std::as_const(methodBoxes_)) box->deleteLater();
    methodBoxes_.clear();
    const Preset* preset = currentPreset();
    if (!preset || !preset->spec.contains("methods")) return;
    for (const auto& m : preset->spec["methods"]) {
        const QString label = methodLabel(m);
        auto* box = new QCheckBox(label, methodsBox_);
        box->setChecked(true);
        box->setIcon(swatch(methodColor(label)));
        if (const auto* info = methodOf(m)) box->setToolTip(QString::fromStdString(info->doc));
        methodsLayout_->addWidget(box);
        methodBoxes_.push_back(box);
    }
}

void ExperimentForm::rebuildParameterFields() {
    while (parametersForm_->rowCount() > 0) parametersForm_->removeRow(0);
    parameterFields_.clear();
    const Preset* preset = currentPreset();
    const auto methods =
        preset ? preset->spec.value("methods", nlohmann::json::array()) : nlohmann::json::array();
    // Every hyper-parameter (but the step size, which "All settings" edits per method) that a
    // method of the preset reads, with the first such method's value.
    for (const auto& p : method_parameters()) {
        if (p.key == std::string("lr")) continue;
        QStringList readers;
        double value = p.default_value();
        for (const auto& m : methods) {
            const auto* info = methodOf(m);
            if (!info || std::find(info->parameters.begin(), info->parameters.end(), p.key) ==
                             info->parameters.end())
                continue;
            if (readers.isEmpty() && m.contains(p.key) && m[p.key].is_number())
                value = m[p.key].get<double>();
            if (!readers.contains(QString::fromStdString(info->name)))
                readers << QString::fromStdString(info->name);
        }
        if (readers.isEmpty()) continue;
        ParameterField field;
        field.key = p.key;
        field.edit = numberEdit(parametersBox_, p.integer != nullptr);
        field.edit->setObjectName(QString::fromStdString(p.key));
        field.initial = QString::number(value, 'g', 12);
        field.edit->setText(field.initial);
        field.edit->setToolTip(
            tr("%1 — of every %2 method")
                .arg(QString::fromUtf8(p.doc), readers.join(QStringLiteral(", "))));
        parametersForm_->addRow(QStringLiteral("%1 (%2)").arg(QString::fromUtf8(p.key),
                                                              readers.join(QStringLiteral(", "))),
                                field.edit);
        parameterFields_.push_back(field);
    }
    parametersBox_->setVisible(!parameterFields_.isEmpty());
}

void ExperimentForm::setSteps(int steps) {
    stepsSpin_->setValue(steps);
}

QString ExperimentForm::outputDir() const {
    return outDirEdit_->text().trimmed();
}

void ExperimentForm::setOutputDir(const QString& dir) {
    outDirEdit_->setText(dir);
}

QStringList ExperimentForm::methodLabels() const {
    QStringList labels;
    for (const QCheckBox* box : methodBoxes_) labels << box->text();
    return labels;
}

void ExperimentForm::setMethodChecked(const QString& label, bool checked) {
    for (QCheckBox* box : std::as_const(methodBoxes_))
        if (box->text() == label) box->setChecked(checked);
}

void ExperimentForm::setDarkPalette(bool on) {
    presetDescription_->setStyleSheet(on ? QStringLiteral("color: #aaa;")
                                         : QStringLiteral("color: #555;"));
}

bool ExperimentForm::buildSpec(nlohmann::json* out, QString* title, QString* error) const {
    const Preset* preset = currentPreset();
    if (!preset) {
        *error = tr("Pick a preset first.");
        return false;
    }
    // Only an edited field overrides the methods' own values.
    std::map<std::string, nlohmann::json> edited;
    for (const auto& f : parameterFields_) {
        const QString text = f.edit->text().trimmed();
        if (text == f.initial) continue;
        bool ok = false;
        const double value = QLocale::c().toDouble(text, &ok);
        if (!ok) {
            *error =
                tr("%1: enter a number such as %2.").arg(QString::fromStdString(f.key), f.initial);
            return false;
        }
        const bool integer = find_method_parameter(f.key)->integer != nullptr;
        edited[f.key] = integer ? nlohmann::json(static_cast<int>(value)) : nlohmann::json(value);
    }

    nlohmann::json j = preset->spec;
    j["batch_size"] = batchSpin_->value();
    j["steps"] = stepsSpin_->value();
    j["seeds"] = nlohmann::json::array({seedSpin_->value()});
    j["optimizer"]["kind"] = optimizerCombo_->currentText().toStdString();
    nlohmann::json methods = nlohmann::json::array();
    for (const auto& m : preset->spec.value("methods", nlohmann::json::array())) {
        const QString label = methodLabel(m);
        const bool ticked = std::any_of(methodBoxes_.begin(), methodBoxes_.end(), [&](auto* b) {
            return b->text() == label && b->isChecked();
        });
        if (!ticked) continue;
        nlohmann::json method = m;
        if (const auto* info = methodOf(m))
            for (const auto& key : info->parameters)
                if (const auto it = edited.find(key); it != edited.end()) method[key] = it->second;
        methods.push_back(method);
    }
    if (methods.empty()) {
        *error = tr("Tick at least one method to run.");
        return false;
    }
    j["methods"] = methods;
    QString modelError;
    if (!modelBox_->apply(j, &modelError)) {
        *error = tr("Cannot start: %1").arg(modelError);
        return false;
    }
    QString editError;
    if (!specEditor_->apply(j, &editError)) {
        *error = tr("Cannot start: %1").arg(editError);
        return false;
    }

    ExperimentSpec spec;
    try {
        spec = parse_spec(j);
    } catch (const std::exception& e) {
        // SpecError names the key: "spec key 'batch_size': is larger than task.n_train (4096)".
        *error = tr("Cannot start: %1").arg(QString::fromStdString(e.what()));
        return false;
    }
    const QString setting = spec.sweep.key.empty()
                                ? tr("batch %1").arg(spec.batch_size)
                                : tr("sweep over %1").arg(QString::fromStdString(spec.sweep.key));
    *title =
        tr("%1 — %2, seed %3").arg(presetCombo_->currentText(), setting).arg(seedSpin_->value());
    if (const std::string& file =
            !spec.icnn.script.empty() ? spec.icnn.script : spec.backbone.script;
        !file.empty())
        *title += tr(" — %1").arg(QFileInfo(QString::fromStdString(file)).fileName());
    *out = j;
    return true;
}

}  // namespace liftlab
