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
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
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
#include "run/run_files.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "spec_editor.h"
#include "training/resume.h"
#include "wheel_guard.h"

namespace liftlab {

namespace {

constexpr int kAutoLogPoints = 10;    // "auto" aims at this many log points on a short run
constexpr int kMinPresetPoints = 10;  // the spec's own interval is kept from this many points on

// Keys a run folder's spec.json records beside the spec (they do not change the run).
const char* const kRecordedKeys[] = {"versions", "data",        "world_size",
                                     "shard",    "merged_from", "device_used"};

// Settings the form's own fields show: "All settings" does not list them again.
const QStringList& formOwnedPaths() {
    static const QStringList paths = {QStringLiteral("batch_size"),
                                      QStringLiteral("steps"),
                                      QStringLiteral("seeds"),
                                      QStringLiteral("log_every"),
                                      QStringLiteral("log_initial"),
                                      QStringLiteral("optimizer.kind"),
                                      QStringLiteral("backbone.script"),
                                      QStringLiteral("backbone.init"),
                                      QStringLiteral("backbone.script_sha256"),
                                      QStringLiteral("icnn.script"),
                                      QStringLiteral("icnn.constrained"),
                                      QStringLiteral("icnn.init"),
                                      QStringLiteral("icnn.script_sha256"),
                                      QStringLiteral("fork_source")};
    return paths;
}

const Preset* findPreset(const QString& name) {
    for (const auto& p : builtin_presets())
        if (QString::fromStdString(p.name) == name) return &p;
    return nullptr;
}

QString methodLabel(const nlohmann::json& m) {
    return QString::fromStdString(m.value("label", m.value("name", std::string())));
}

// The registry entry of a spec's method (null for an unknown name: the spec check says so).
const MethodInfo* methodOf(const nlohmann::json& m) {
    return find_method(m.value("name", std::string()));
}

const TaskKindInfo* taskKindOf(const nlohmann::json& spec) {
    const auto task = spec.value("task", nlohmann::json::object());
    return find_task_kind(task.is_object() ? task.value("kind", TaskSpec{}.kind) : TaskSpec{}.kind);
}

bool isIcnnSpec(const nlohmann::json& spec) {
    const auto* kind = taskKindOf(spec);
    return kind && kind->family == TaskFamily::Icnn;
}

// Which model a user may bring: a backbone for the backbone + last-layer tasks, an ICNN for the
// energy models on the built-in architecture; none for DFIV and the CP-Flows.
ModelFileBox::Mode modelModeOf(const nlohmann::json& spec) {
    const auto* info = taskKindOf(spec);
    if (!info) return ModelFileBox::Mode::Hidden;
    if (info->family == TaskFamily::LastLayer) return ModelFileBox::Mode::Backbone;
    const auto icnn = spec.value("icnn", nlohmann::json::object());
    const bool builtin =
        icnn.is_object() && icnn.value("architecture", IcnnSpec{}.architecture) == "liftlab";
    if ((info->name == "icnn-ebm-1d" || info->name == "icnn-ebm-nd") && builtin)
        return ModelFileBox::Mode::Icnn;
    return ModelFileBox::Mode::Hidden;
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

// The family a fork can start a method from another of (training/resume.cpp's rule): the
// gradient and closed-form methods share a backbone and a linear head; the positivity strategies
// an ICNN; "" for the others (they start only from their own state).
QString forkFamilyOfMethod(const MethodInfo* info) {
    if (!info) return QString();
    if (info->family == MethodFamily::Gradient || info->family == MethodFamily::ClosedForm)
        return QStringLiteral("last-layer");
    if (info->family == MethodFamily::Positivity) return QStringLiteral("icnn");
    return QString();
}

QString seedsDisplay(const nlohmann::json& seeds) {
    QStringList parts;
    if (seeds.is_array())
        for (const auto& s : seeds)
            if (s.is_number_unsigned()) parts << QString::number(s.get<quint64>());
    return parts.join(QStringLiteral(", "));
}

QString jsonText(const nlohmann::json& v) {
    return v.is_string() ? QString::fromStdString(v.get<std::string>())
                         : QString::fromStdString(v.dump());
}

}  // namespace

int ExperimentForm::autoLogEvery(int steps, int specSteps, int specLogEvery) {
    if (specLogEvery > 0 && (steps >= specSteps || steps / specLogEvery >= kMinPresetPoints))
        return specLogEvery;
    const int every = std::max(1, steps / kAutoLogPoints);
    return specLogEvery > 0 ? std::min(every, specLogEvery) : every;
}

bool ExperimentForm::parseSeeds(const QString& text, std::vector<quint64>* seeds) {
    static const QRegularExpression dash(QStringLiteral("\\s*[-–]\\s*"));
    static const QRegularExpression separators(QStringLiteral("[,;\\s]+"));
    static const QRegularExpression range(QStringLiteral("^(\\d+)-(\\d+)$"));
    QString cleaned = text.trimmed();
    if (cleaned.startsWith(QLatin1Char('[')) && cleaned.endsWith(QLatin1Char(']')))
        cleaned = cleaned.mid(1, cleaned.size() - 2);
    cleaned.replace(dash, QStringLiteral("-"));
    std::vector<quint64> out;
    for (const QString& part : cleaned.split(separators, Qt::SkipEmptyParts)) {
        bool ok = false;
        if (const auto m = range.match(part); m.hasMatch()) {
            bool okB = false;
            const quint64 a = m.captured(1).toULongLong(&ok), b = m.captured(2).toULongLong(&okB);
            if (!ok || !okB || b < a || b - a > 10000) return false;
            for (quint64 s = a; s <= b; ++s) out.push_back(s);
            continue;
        }
        const quint64 s = part.toULongLong(&ok);
        if (!ok) return false;
        out.push_back(s);
    }
    if (out.empty()) return false;
    *seeds = out;
    return true;
}

ExperimentForm::ExperimentForm(QWidget* parent) : QWidget(parent) {
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->addWidget(buildPresetBox());
    methodsBox_ = new QGroupBox(tr("Methods"), this);
    auto* methodsColumn = new QVBoxLayout(methodsBox_);
    methodsLayout_ = new QVBoxLayout;
    methodsColumn->addLayout(methodsLayout_);
    {
        // A fork's own rows: add a method; where new methods start from; a refusal.
        addMethodRow_ = new QWidget(methodsBox_);
        auto* row = new QHBoxLayout(addMethodRow_);
        row->setContentsMargins(0, 0, 0, 0);
        addMethodCombo_ = new QComboBox(addMethodRow_);
        addMethodCombo_->setObjectName(QStringLiteral("addMethodName"));
        addMethodCombo_->setToolTip(
            tr("A method to add to the fork (spec key methods[]): it starts from the parent's "
               "method chosen below, with its own settings"));
        auto* add = new QPushButton(tr("Add method"), addMethodRow_);
        add->setObjectName(QStringLiteral("addMethod"));
        row->addWidget(addMethodCombo_, 1);
        row->addWidget(add);
        connect(add, &QPushButton::clicked, this, [this] {
            if (addMethodCombo_->currentIndex() >= 0) addMethod(addMethodCombo_->currentText());
        });
        forkSourceRow_ = new QWidget(methodsBox_);
        auto* source = new QHBoxLayout(forkSourceRow_);
        source->setContentsMargins(0, 0, 0, 0);
        auto* sourceLabel = new QLabel(tr("New methods start from"), forkSourceRow_);
        forkSourceCombo_ = new QComboBox(forkSourceRow_);
        forkSourceCombo_->setObjectName(QStringLiteral("forkSource"));
        // Narrow whatever the labels: the form's column does not widen for them.
        for (QComboBox* combo : {addMethodCombo_, forkSourceCombo_}) {
            combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
            combo->setMinimumContentsLength(8);
        }
        forkSourceCombo_->setToolTip(
            tr("The parent's method whose weights a method the parent did not run starts from, "
               "at the fork step (spec key fork_source; liftlab-cli run --fork … "
               "--fork-from-method LABEL). Same family only: a backbone and linear head (sgd, "
               "adam, cf-*) or an ICNN (the positivity strategies)"));
        sourceLabel->setBuddy(forkSourceCombo_);
        source->addWidget(sourceLabel);
        source->addWidget(forkSourceCombo_, 1);
        // The form fills it under a signal blocker: a change that gets through is the user's.
        connect(forkSourceCombo_, qOverload<int>(&QComboBox::currentIndexChanged), this,
                [this](int) { forkSourceChosen_ = true; });
        forkProblem_ = new QLabel(methodsBox_);
        forkProblem_->setObjectName(QStringLiteral("forkProblem"));
        forkProblem_->setWordWrap(true);
        forkProblem_->setTextInteractionFlags(Qt::TextSelectableByMouse);
        forkProblem_->setStyleSheet(QStringLiteral("color: #b00020;"));
        methodsColumn->addWidget(addMethodRow_);
        methodsColumn->addWidget(forkSourceRow_);
        methodsColumn->addWidget(forkProblem_);
        addMethodRow_->setVisible(false);
        forkSourceRow_->setVisible(false);
        forkProblem_->setVisible(false);
    }
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
            &ExperimentForm::onPresetChosen);
    connect(modelBox_, &ModelFileBox::readinessChanged, this, &ExperimentForm::readinessChanged);
    connect(modelBox_, &ModelFileBox::inspected, this, [this] {
        if (pendingConstrained_.isEmpty() || !modelBox_->loaded()) return;
        modelBox_->setConstrained(pendingConstrained_);
        pendingConstrained_.clear();
    });
    const Preset* first = findPreset(presetCombo_->currentText());
    if (first) loadSpec(first->spec, QString());
    WheelGuard::guard(this);
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
            if (isIcnnSpec(p.spec) != icnn) continue;
            presetCombo_->addItem(QString::fromStdString(p.name));
            presetCombo_->setItemData(presetCombo_->count() - 1,
                                      QString::fromStdString(p.description), Qt::ToolTipRole);
        }
    }
    presetCombo_->setCurrentIndex(1);
    presetIndex_ = 1;
    presetDescription_ = new QLabel(box);
    presetDescription_->setObjectName(QStringLiteral("presetDescription"));
    presetDescription_->setWordWrap(true);
    presetDescription_->setTextInteractionFlags(Qt::TextSelectableByMouse);
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
    auto* seedsRow = new QHBoxLayout;
    seedsEdit_ = new QLineEdit(box);
    seedsEdit_->setObjectName(QStringLiteral("seeds"));
    seedsEdit_->setPlaceholderText(tr("0, 1, 2  or  0-4"));
    seedsCount_ = new QLabel(box);
    seedsCount_->setObjectName(QStringLiteral("seedsCount"));
    seedsRow->addWidget(seedsEdit_, 1);
    seedsRow->addWidget(seedsCount_);
    stepsSpin_ = new QSpinBox(box);
    stepsSpin_->setObjectName(QStringLiteral("steps"));
    stepsSpin_->setRange(1, 100000000);
    stepsSpin_->setGroupSeparatorShown(true);
    auto* logRow = new QHBoxLayout;
    logEverySpin_ = new QSpinBox(box);
    logEverySpin_->setObjectName(QStringLiteral("logEvery"));
    logEverySpin_->setRange(1, 100000000);
    logEverySpin_->setSuffix(tr(" steps"));
    logAutoBox_ = new QCheckBox(tr("auto"), box);
    logAutoBox_->setObjectName(QStringLiteral("logEveryAuto"));
    logRow->addWidget(logEverySpin_, 1);
    logRow->addWidget(logAutoBox_);
    logInitialBox_ = new QCheckBox(tr("also at step 0 (untrained)"), box);
    logInitialBox_->setObjectName(QStringLiteral("logInitial"));
    optimizerCombo_ = new QComboBox(box);
    optimizerCombo_->setObjectName(QStringLiteral("optimizer"));
    for (const auto& kind : optimizer_kinds())
        optimizerCombo_->addItem(QString::fromStdString(kind));
    form->addRow(tr("Batch size"), batchSpin_);
    form->addRow(tr("Seeds"), seedsRow);
    form->addRow(tr("Steps"), stepsSpin_);
    form->addRow(tr("Log every"), logRow);
    form->addRow(QString(), logInitialBox_);
    form->addRow(tr("Optimizer"), optimizerCombo_);
    connect(seedsEdit_, &QLineEdit::textChanged, this, &ExperimentForm::updateSeedsCount);
    connect(stepsSpin_, qOverload<int>(&QSpinBox::valueChanged), this,
            &ExperimentForm::updateLogEvery);
    connect(logAutoBox_, &QCheckBox::toggled, this, &ExperimentForm::updateLogEvery);
    return box;
}

QWidget* ExperimentForm::buildOutputBox() {
    auto* box = new QGroupBox(tr("Output"), this);
    auto* layout = new QHBoxLayout(box);
    outDirEdit_ = new QLineEdit(QDir::current().filePath(QStringLiteral("runs")), box);
    outDirEdit_->setObjectName(QStringLiteral("outputDir"));
    outDirEdit_->setToolTip(
        tr("Each run writes a new folder here. Not a spec key (liftlab-cli run --out DIR) — "
           "default: runs/ in the current folder"));
    auto* browse = new QToolButton(box);
    browse->setText(QStringLiteral("…"));
    browse->setToolTip(tr("Pick the output folder"));
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
    allSettingsToggle_ = new QCheckBox(tr("All settings"), box);
    allSettingsToggle_->setObjectName(QStringLiteral("allSettings"));
    allSettingsToggle_->setToolTip(
        tr("Every other setting of the spec, editable (the fields above are not repeated); "
           "each row's tooltip gives its spec key and default"));
    specEditor_ = new SpecEditor(box);
    specEditor_->setMinimumHeight(220);
    specEditor_->setVisible(false);
    layout->addWidget(allSettingsToggle_);
    layout->addWidget(specEditor_);
    connect(allSettingsToggle_, &QCheckBox::toggled, specEditor_, &QWidget::setVisible);
    return box;
}

const Preset* ExperimentForm::currentPreset() const {
    return findPreset(presetCombo_->currentText());
}

bool ExperimentForm::hasPreset(const QString& name) const {
    return presetCombo_->findText(name) >= 0;
}

QString ExperimentForm::presetName() const {
    return presetCombo_->currentText();
}

bool ExperimentForm::selectPreset(const QString& name) {
    const int index = presetCombo_->findText(name);
    const Preset* preset = findPreset(name);
    if (index < 0 || !preset) return false;
    {
        const QSignalBlocker block(presetCombo_);
        presetCombo_->setCurrentIndex(index);
    }
    presetIndex_ = index;
    loadSpec(preset->spec, QString());
    return true;
}

void ExperimentForm::onPresetChosen(int index) {
    const Preset* preset = findPreset(presetCombo_->itemText(index));
    if (!preset || index == presetIndex_) return;
    const QStringList edited = editedFields();
    if (!edited.isEmpty()) {
        // The form holds edits (or an opened run): switching would drop them.
        QMessageBox ask(QMessageBox::Question, tr("Switch preset?"),
                        tr("The form holds changes to %1 (%2). Switching to %3 loads its values "
                           "and drops those changes.")
                            .arg(edited.join(QStringLiteral(", ")),
                                 loadedRun_.isEmpty()
                                     ? tr("preset %1").arg(presetCombo_->itemText(presetIndex_))
                                     : tr("run %1").arg(QFileInfo(loadedRun_).fileName()),
                                 presetCombo_->itemText(index)),
                        QMessageBox::NoButton, this);
        ask.setObjectName(QStringLiteral("presetSwitchQuestion"));
        QPushButton* discard =
            ask.addButton(tr("Switch, drop my changes"), QMessageBox::AcceptRole);
        discard->setObjectName(QStringLiteral("switchPreset"));
        QPushButton* keep = ask.addButton(tr("Keep my changes"), QMessageBox::RejectRole);
        keep->setObjectName(QStringLiteral("keepEdits"));
        ask.setDefaultButton(keep);
        ask.exec();
        if (ask.clickedButton() != discard) {
            const QSignalBlocker block(presetCombo_);
            presetCombo_->setCurrentIndex(presetIndex_);
            return;
        }
    }
    presetIndex_ = index;
    loadSpec(preset->spec, QString());
}

bool ExperimentForm::readRunSpec(const QString& runDir, nlohmann::json* spec, QString* error) {
    const std::string file = runDir.toStdString() + "/" + run_folder::kSpec;
    try {
        *spec = read_spec_json(file).json;
        parse_spec(*spec);  // a spec this LiftLab can run again
    } catch (const std::exception& e) {
        *error = QString::fromStdString(e.what());
        return false;
    }
    for (const char* key : kRecordedKeys) spec->erase(key);
    return true;
}

bool ExperimentForm::loadRun(const QString& runDir, QString* error) {
    nlohmann::json spec;
    if (!readRunSpec(runDir, &spec, error)) return false;
    const QString name = QString::fromStdString(spec.value("name", std::string()));
    {
        const QSignalBlocker block(presetCombo_);
        const int index = presetCombo_->findText(name);
        if (index >= 0) {
            presetCombo_->setCurrentIndex(index);
            presetIndex_ = index;
        }
    }
    loadSpec(spec, QDir::cleanPath(QFileInfo(runDir).absoluteFilePath()));
    return true;
}

void ExperimentForm::loadSpec(const nlohmann::json& spec, const QString& run) {
    loading_ = true;
    forkParent_.clear();  // a new spec: no longer a fork (setFork follows loadRun)
    forkStep_ = 0;
    forkSourceChosen_ = false;
    added_ = nlohmann::json::array();
    forkProblem_->clear();
    base_ = spec;
    loadedRun_ = run;
    const nlohmann::json& j = base_;
    const Preset* preset = findPreset(QString::fromStdString(j.value("name", std::string())));
    QString description = preset ? QString::fromStdString(preset->description) : QString();
    if (!run.isEmpty())
        description =
            tr("<b>Opened run %1</b> — the form shows its spec as it ran; Start (or "
               "Re-run) runs it again.%2")
                .arg(QFileInfo(run).fileName().toHtmlEscaped(),
                     description.isEmpty() ? QString()
                                           : QStringLiteral("<br>") + description.toHtmlEscaped());
    presetDescription_->setText(description);
    specEditor_->setSpec(j, formOwnedPaths(), originText());
    batchSpin_->setValue(j.value("batch_size", ExperimentSpec{}.batch_size));
    stepsSpin_->setValue(j.value("steps", ExperimentSpec{}.steps));
    seedsEdit_->setText(seedsDisplay(j.value("seeds", nlohmann::json::array({0}))));
    // A preset's interval follows Steps (auto); an opened run keeps its own.
    {
        const QSignalBlocker block(logAutoBox_);
        logAutoBox_->setChecked(run.isEmpty());
    }
    logEverySpin_->setValue(j.value("log_every", ExperimentSpec{}.log_every));
    logInitialBox_->setChecked(run.isEmpty() ? true : j.value("log_initial", false));
    updateLogEvery();
    const std::string optimizer = j.contains("optimizer") && j["optimizer"].is_object()
                                      ? j["optimizer"].value("kind", OptimizerSpec{}.kind)
                                      : OptimizerSpec{}.kind;
    optimizerCombo_->setCurrentText(QString::fromStdString(optimizer));
    // Only methods without an optimizer of their own (sgd, adam) train with the spec's.
    bool usesSpecOptimizer = false;
    for (const auto& m : j.value("methods", nlohmann::json::array()))
        if (const auto* info = methodOf(m)) usesSpecOptimizer |= info->optimizer.empty();
    optimizerCombo_->setEnabled(usesSpecOptimizer);
    // A spec that sweeps the batch size owns that value.
    const bool sweepsBatch = j.contains("sweep") && j["sweep"].is_object() &&
                             j["sweep"].value("key", std::string()) == "batch_size";
    batchSpin_->setEnabled(!sweepsBatch);
    rebuildMethodBoxes();
    rebuildParameterFields();
    updateForkControls();

    // The user's model, as the spec names it.
    const auto mode = modelModeOf(j);
    modelBox_->setMode(mode);
    modelBox_->setExperiment(j);
    QString script, init = QStringLiteral("file");
    pendingConstrained_.clear();
    const auto backbone = j.value("backbone", nlohmann::json::object());
    const auto icnn = j.value("icnn", nlohmann::json::object());
    if (mode == ModelFileBox::Mode::Backbone && backbone.is_object() &&
        backbone.value("kind", std::string()) == "torchscript") {
        script = QString::fromStdString(backbone.value("script", std::string()));
        init = QString::fromStdString(backbone.value("init", std::string("file")));
    } else if (mode == ModelFileBox::Mode::Icnn && icnn.is_object() &&
               !icnn.value("script", std::string()).empty()) {
        script = QString::fromStdString(icnn.value("script", std::string()));
        init = QString::fromStdString(icnn.value("init", std::string("file")));
        for (const auto& n : icnn.value("constrained", nlohmann::json::array()))
            if (n.is_string()) pendingConstrained_ << QString::fromStdString(n.get<std::string>());
    }
    modelBox_->setInit(init);
    if (script != modelBox_->path() || !script.isEmpty()) modelBox_->setPath(script);
    updateTooltips();
    WheelGuard::guard(this);
    loading_ = false;
    Q_EMIT specLoaded();
    Q_EMIT readinessChanged();
}

QString ExperimentForm::originText() const {
    if (!loadedRun_.isEmpty()) return tr("as run in %1").arg(QFileInfo(loadedRun_).fileName());
    return tr("preset %1").arg(QString::fromStdString(base_.value("name", std::string())));
}

void ExperimentForm::updateTooltips() {
    const QString origin = originText();
    const auto tip = [&](QWidget* w, const QString& what, const QString& key,
                         const QString& value) {
        w->setToolTip(tr("%1\nspec key %2 — default: %3 (%4)").arg(what, key, value, origin));
    };
    tip(presetCombo_, tr("The built-in experiment the form starts from"), QStringLiteral("name"),
        QString::fromStdString(base_.value("name", std::string())));
    tip(batchSpin_,
        batchSpin_->isEnabled() ? tr("Samples per training step")
                                : tr("Swept by this experiment (see All settings: sweep)"),
        QStringLiteral("batch_size"), jsonText(base_.value("batch_size", nlohmann::json())));
    tip(seedsEdit_,
        tr("Every method trains once per seed, on the same data; curves show mean ± sd over "
           "seeds. A list (0, 1, 2) or a range (0-4)"),
        QStringLiteral("seeds"), seedsDisplay(base_.value("seeds", nlohmann::json::array())));
    tip(stepsSpin_, tr("Training steps per method and seed"), QStringLiteral("steps"),
        jsonText(base_.value("steps", nlohmann::json())));
    const int specEvery = base_.value("log_every", ExperimentSpec{}.log_every);
    tip(logEverySpin_,
        tr("Steps between two log points of every metric (auto: the spec's interval at its own "
           "Steps or when it gives at least %1 points, else Steps / %2)")
            .arg(kMinPresetPoints)
            .arg(kAutoLogPoints),
        QStringLiteral("log_every"), QString::number(specEvery));
    logAutoBox_->setToolTip(
        tr("The log interval follows Steps, so a short run still draws a "
           "curve (spec key log_every, written as the number shown) — "
           "default: on for a preset, off for an opened run"));
    tip(logInitialBox_,
        tr("Also log the untrained models' test metrics at step 0, so each curve starts at its "
           "beginning"),
        QStringLiteral("log_initial"),
        loadedRun_.isEmpty() ? tr("on in the window (off in liftlab-cli)")
                             : jsonText(base_.value("log_initial", false)));
    const auto optimizer = base_.value("optimizer", nlohmann::json::object());
    tip(optimizerCombo_,
        isIcnnSpec(base_)
            ? tr("Optimizer of the ICNN and its positivity strategy")
            : tr("Backbone optimizer of the methods without one of their own (cf-*, ce, dfiv)"),
        QStringLiteral("optimizer.kind"),
        QString::fromStdString(optimizer.is_object() ? optimizer.value("kind", OptimizerSpec{}.kind)
                                                     : OptimizerSpec{}.kind));
}

void ExperimentForm::rebuildMethodBoxes() {
    for (QCheckBox* box : std::as_const(methodBoxes_)) {
        // Gone at once for findChild (tests, scripts) and the layout; deleted once idle.
        box->setObjectName(QString());
        box->hide();
        box->deleteLater();
    }
    methodBoxes_.clear();
    int index = 0;
    for (const auto& m : base_.value("methods", nlohmann::json::array()))
        methodBoxes_.push_back(addMethodBox(m, index++));
}

QCheckBox* ExperimentForm::addMethodBox(const nlohmann::json& m, int index) {
    const QString label = methodLabel(m);
    auto* box = new QCheckBox(label, methodsBox_);
    box->setObjectName(QStringLiteral("method:") + label);
    box->setChecked(true);
    box->setIcon(swatch(methodColor(label)));
    const auto* info = methodOf(m);
    box->setToolTip(tr("%1\nspec key methods[%2] (name %3) — default: run (%4)")
                        .arg(info ? QString::fromStdString(info->doc) : QString())
                        .arg(index)
                        .arg(QString::fromStdString(m.value("name", std::string())),
                             index < int(base_.value("methods", nlohmann::json::array()).size())
                                 ? originText()
                                 : tr("added to the fork")));
    methodsLayout_->addWidget(box);
    connect(box, &QCheckBox::toggled, this, [this] { updateForkControls(); });
    return box;
}

nlohmann::json ExperimentForm::formMethods() const {
    nlohmann::json all = base_.value("methods", nlohmann::json::array());
    for (const auto& m : added_) all.push_back(m);
    return all;
}

QStringList ExperimentForm::addableMethods() const {
    QStringList out;
    const auto* task = taskKindOf(base_);
    if (!task || forkParent_.isEmpty()) return out;
    QStringList held;
    for (const auto& m : formMethods()) held << methodLabel(m);
    for (const auto& info : method_registry()) {
        const QString name = QString::fromStdString(info.name);
        if (held.contains(name) || !takes_methods(task->family, info.family)) continue;
        if (info.cross_entropy && !task->classification) continue;
        out << name;
    }
    return out;
}

void ExperimentForm::addMethod(const QString& name) {
    if (!addableMethods().contains(name)) return;
    const nlohmann::json method = {{"name", name.toStdString()}};
    added_.push_back(method);
    methodBoxes_.push_back(addMethodBox(method, int(formMethods().size()) - 1));
    rebuildParameterFields();
    updateForkControls();
    WheelGuard::guard(this);
}

QStringList ExperimentForm::newMethodLabels() const {
    QStringList out;
    if (forkParent_.isEmpty()) return out;
    QStringList parentLabels;
    for (const auto& m : base_.value("methods", nlohmann::json::array()))
        parentLabels << methodLabel(m);
    for (const QCheckBox* box : methodBoxes_)
        if (box->isChecked() && !parentLabels.contains(box->text())) out << box->text();
    return out;
}

QString ExperimentForm::forkSource() const {
    if (newMethodLabels().isEmpty()) return QString();
    return forkSourceCombo_->currentData().toString();
}

void ExperimentForm::updateForkControls() {
    const bool fork = !forkParent_.isEmpty();
    addMethodRow_->setVisible(fork);
    if (fork) {
        const QString current = addMethodCombo_->currentText();
        const QSignalBlocker block(addMethodCombo_);
        addMethodCombo_->clear();
        addMethodCombo_->addItems(addableMethods());
        if (addMethodCombo_->findText(current) >= 0) addMethodCombo_->setCurrentText(current);
        addMethodRow_->setEnabled(addMethodCombo_->count() > 0);
    }
    const QStringList added = newMethodLabels();
    forkSourceRow_->setVisible(fork && !added.isEmpty());
    if (!fork) return;
    // The parent's methods, each a possible source; which one is picked by default.
    const nlohmann::json parentMethods = base_.value("methods", nlohmann::json::array());
    QString family;
    for (const auto& m : formMethods())
        if (methodLabel(m) == (added.isEmpty() ? QString() : added.front()))
            family = forkFamilyOfMethod(methodOf(m));
    QStringList sameFamily, leftOut;
    for (const auto& m : parentMethods) {
        const QString label = methodLabel(m);
        if (family.isEmpty() || forkFamilyOfMethod(methodOf(m)) != family) continue;
        sameFamily << label;
        for (const QCheckBox* box : std::as_const(methodBoxes_))
            if (box->text() == label && !box->isChecked()) leftOut << label;
    }
    const QString chosen = forkSourceCombo_->currentData().toString();
    const QSignalBlocker block(forkSourceCombo_);
    forkSourceCombo_->clear();
    forkSourceCombo_->addItem(tr("(choose)"), QString());
    for (const auto& m : parentMethods) {
        const QString label = methodLabel(m);
        const auto* info = methodOf(m);
        forkSourceCombo_->addItem(label, label);
        if (info)
            forkSourceCombo_->setItemData(forkSourceCombo_->count() - 1,
                                          tr("%1: the parent's %2 (%3 family)")
                                              .arg(label, QString::fromStdString(info->name),
                                                   QString::fromUtf8(to_string(info->family))),
                                          Qt::ToolTipRole);
    }
    QString pick = chosen;
    if (!forkSourceChosen_)
        pick = leftOut.size() == 1      ? leftOut.front()
               : sameFamily.size() == 1 ? sameFamily.front()
                                        : QString();
    const int at = forkSourceCombo_->findData(pick);
    forkSourceCombo_->setCurrentIndex(at >= 0 ? at : 0);
}

void ExperimentForm::rebuildParameterFields() {
    // Edits survive a rebuild (a method added to a fork brings its own parameters).
    std::map<std::string, QString> typed;
    for (const auto& f : parameterFields_)
        if (f.edit->text().trimmed() != f.initial) typed[f.key] = f.edit->text();
    while (parametersForm_->rowCount() > 0) parametersForm_->removeRow(0);
    parameterFields_.clear();
    const auto methods = formMethods();
    // Every hyper-parameter (but the step size, which "All settings" edits per method) that a
    // method of the spec reads, with the first such method's value.
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
            tr("%1 — of every %2 method\nspec key methods[].%3 — default: %4 (%5; the "
               "registry's: %6)")
                .arg(QString::fromUtf8(p.doc), readers.join(QStringLiteral(", ")),
                     QString::fromUtf8(p.key), field.initial, originText(),
                     QString::number(p.default_value(), 'g', 12)));
        parametersForm_->addRow(QStringLiteral("%1 (%2)").arg(QString::fromUtf8(p.key),
                                                              readers.join(QStringLiteral(", "))),
                                field.edit);
        if (const auto it = typed.find(field.key); it != typed.end())
            field.edit->setText(it->second);
        parameterFields_.push_back(field);
    }
    parametersBox_->setVisible(!parameterFields_.isEmpty());
}

void ExperimentForm::updateLogEvery() {
    const bool autoOn = logAutoBox_->isChecked();
    logEverySpin_->setEnabled(!autoOn);
    if (autoOn)
        logEverySpin_->setValue(autoLogEvery(stepsSpin_->value(),
                                             base_.value("steps", ExperimentSpec{}.steps),
                                             base_.value("log_every", ExperimentSpec{}.log_every)));
}

void ExperimentForm::updateSeedsCount() {
    std::vector<quint64> seeds;
    const bool ok = parseSeeds(seedsEdit_->text(), &seeds);
    seedsCount_->setText(!ok                 ? tr("not seeds")
                         : seeds.size() == 1 ? tr("1 seed")
                                             : tr("%1 seeds").arg(seeds.size()));
    seedsCount_->setStyleSheet(ok ? QString() : QStringLiteral("color: #b00020;"));
}

void ExperimentForm::setSteps(int steps) {
    stepsSpin_->setValue(steps);
}

int ExperimentForm::steps() const {
    return stepsSpin_->value();
}

bool ExperimentForm::setSeedsText(const QString& text) {
    std::vector<quint64> seeds;
    if (!parseSeeds(text, &seeds)) return false;
    seedsEdit_->setText(text);
    return true;
}

QString ExperimentForm::seedsText() const {
    return seedsEdit_->text();
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

QStringList ExperimentForm::editedFields() const {
    QStringList out;
    if (!loadedRun_.isEmpty()) out << tr("the opened run's settings");
    if (batchSpin_->value() != base_.value("batch_size", ExperimentSpec{}.batch_size))
        out << tr("Batch size");
    std::vector<quint64> seeds;
    if (!parseSeeds(seedsEdit_->text(), &seeds) ||
        nlohmann::json(seeds) != base_.value("seeds", nlohmann::json::array({0})))
        out << tr("Seeds");
    if (stepsSpin_->value() != base_.value("steps", ExperimentSpec{}.steps)) out << tr("Steps");
    if (!logAutoBox_->isChecked() &&
        logEverySpin_->value() != base_.value("log_every", ExperimentSpec{}.log_every))
        out << tr("Log every");
    for (const QCheckBox* box : methodBoxes_)
        if (!box->isChecked() || !added_.empty()) {
            out << tr("Methods");
            break;
        }
    for (const auto& f : parameterFields_)
        if (f.edit->text().trimmed() != f.initial) out << QString::fromStdString(f.key);
    if (!specEditor_->changedPaths().isEmpty()) out << specEditor_->changedPaths();
    if (loadedRun_.isEmpty() && !modelBox_->path().isEmpty()) out << tr("Your model");
    return out;
}

QString ExperimentForm::startBlockReason() const {
    return modelBox_->blockReason();
}

bool ExperimentForm::buildSpec(nlohmann::json* out, QString* title, QString* error) const {
    if (!base_.is_object() || base_.empty()) {
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
    std::vector<quint64> seeds;
    if (!parseSeeds(seedsEdit_->text(), &seeds)) {
        *error = tr("Seeds: '%1' is not a list of seeds; enter e.g. 0, 1, 2 or 0-4.")
                     .arg(seedsEdit_->text());
        return false;
    }

    nlohmann::json j = base_;
    j["batch_size"] = batchSpin_->value();
    j["steps"] = stepsSpin_->value();
    j["seeds"] = seeds;
    j["log_every"] = logEverySpin_->value();
    j["log_initial"] = logInitialBox_->isChecked();
    j["optimizer"]["kind"] = optimizerCombo_->currentText().toStdString();
    nlohmann::json methods = nlohmann::json::array();
    for (const auto& m : formMethods()) {
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
    // An opened run's model, taken out of the box: back to the preset's built-in one.
    if (modelBox_->path().isEmpty()) {
        const Preset* preset = findPreset(QString::fromStdString(j.value("name", std::string())));
        const bool script = j.contains("backbone") && j["backbone"].is_object() &&
                            j["backbone"].value("kind", std::string()) == "torchscript";
        const bool icnnScript = j.contains("icnn") && j["icnn"].is_object() &&
                                !j["icnn"].value("script", std::string()).empty();
        if (script || icnnScript) {
            if (!preset) {
                *error =
                    tr("This run trained a model of yours and has no preset to fall back "
                       "on: pick its file again in the model box.");
                return false;
            }
            if (script) j["backbone"] = preset->spec.value("backbone", nlohmann::json::object());
            if (icnnScript) j["icnn"] = preset->spec.value("icnn", nlohmann::json::object());
        }
    }
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

    // A fork (setFork): the child of the parent's run folder after its kept step; a method the
    // parent did not run starts from the source in "New methods start from" (not from the one
    // the parent itself was forked from).
    if (!forkParent_.isEmpty()) {
        j["parent"] = forkParent_.toStdString();
        j["fork_step"] = forkStep_;
        j.erase("fork_source");
        if (const QString source = forkSource(); !source.isEmpty())
            j["fork_source"] = source.toStdString();
    }

    ExperimentSpec spec;
    try {
        spec = parse_spec(j);
    } catch (const std::exception& e) {
        // SpecError names the key: "spec key 'batch_size': is larger than task.n_train (4096)".
        *error = tr("Cannot start: %1").arg(QString::fromStdString(e.what()));
        return false;
    }
    // A fork the engine refuses (no source, another family, another width, no kept state) is
    // refused here, before anything starts, with the engine's reason (check_fork reads the
    // parent's spec.json and lists its states: cheap).
    if (!spec.parent.empty()) {
        try {
            check_fork(spec);
        } catch (const std::exception& e) {
            *error = tr("Cannot fork: %1").arg(QString::fromStdString(e.what()));
            // The engine names the CLI's flag; the form's box is where to name the source here.
            if (error->contains(QLatin1String("fork_source")))
                *error += tr(" — here: New methods start from.");
            forkProblem_->setText(*error);
            forkProblem_->setVisible(true);
            return false;
        }
    }
    forkProblem_->clear();
    forkProblem_->setVisible(false);
    const QString setting = spec.sweep.key.empty()
                                ? tr("batch %1").arg(spec.batch_size)
                                : tr("sweep over %1").arg(QString::fromStdString(spec.sweep.key));
    *title = tr("%1 — %2, %3, %4 steps")
                 .arg(QString::fromStdString(spec.name), setting,
                      spec.seeds.size() == 1 ? tr("seed %1").arg(spec.seeds.front())
                                             : tr("%1 seeds").arg(spec.seeds.size()))
                 .arg(spec.steps);
    if (const std::string& file =
            !spec.icnn.script.empty() ? spec.icnn.script : spec.backbone.script;
        !file.empty())
        *title += tr(" — %1").arg(QFileInfo(QString::fromStdString(file)).fileName());
    if (!forkParent_.isEmpty())
        *title +=
            tr(" — fork of %1 after step %2").arg(QFileInfo(forkParent_).fileName()).arg(forkStep_);
    *out = j;
    return true;
}

void ExperimentForm::setFork(const QString& parentDir, int forkStep, int requestedStep) {
    forkParent_ = QDir::cleanPath(QFileInfo(parentDir).absoluteFilePath());
    forkStep_ = forkStep;
    const QString name = QFileInfo(forkParent_).fileName().toHtmlEscaped();
    const QString kept = forkStep == requestedStep
                             ? tr("a state was kept at step %1").arg(forkStep)
                             : tr("its latest kept state at or before step %1").arg(requestedStep);
    presetDescription_->setText(
        tr("<b>Fork of %1 after step %2</b> (%3). Change any setting; untick a method or "
           "add one (Add method: it starts from the parent's method chosen in \"New methods "
           "start from\"), then Start runs the child from step %4 as a new run folder "
           "linked to its parent. Choosing a preset or opening a run leaves the fork.")
            .arg(name)
            .arg(forkStep)
            .arg(kept)
            .arg(forkStep + 1));
    forkSourceChosen_ = false;
    updateForkControls();
}

}  // namespace liftlab
