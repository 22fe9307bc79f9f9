#include "main_window.h"

#include <qcustomplot.h>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDesktopServices>
#include <QDir>
#include <QDockWidget>
#include <QDoubleValidator>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHash>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QLocale>
#include <QMenuBar>
#include <QMimeData>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTimer>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>

#include "core/bounded_input.h"
#include "core/errors.h"
#include "loss_curve_panel.h"
#include "method_colors.h"
#include "panel_feed.h"
#include "plot_style.h"
#include "run_folder_data.h"
#include "run_history_panel.h"
#include "run_view.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
#include "spec_editor.h"
#include "training/icnn_landscape.h"
#include "training_session.h"

namespace liftlab {

namespace {

const QString kShownMetric = QStringLiteral("test_loss");
constexpr int kProgressScale = 1000;  // QProgressBar is integer: per-mille resolution

const Preset* findPreset(const QString& name) {
    for (const auto& p : builtin_presets())
        if (QString::fromStdString(p.name) == name) return &p;
    return nullptr;
}

QString methodLabel(const nlohmann::json& m) {
    return QString::fromStdString(m.value("label", m.value("name", std::string())));
}

// The first value of `key` among the preset's methods named one of `names`, else `fallback`.
double firstMethodValue(const nlohmann::json& spec, std::initializer_list<const char*> names,
                        const char* key, double fallback, bool* found) {
    *found = false;
    if (!spec.contains("methods")) return fallback;
    for (const auto& m : spec["methods"]) {
        const std::string name = m.value("name", std::string());
        if (std::none_of(names.begin(), names.end(), [&](const char* n) { return name == n; }))
            continue;
        *found = true;
        return m.contains(key) && m[key].is_number() ? m[key].get<double>() : fallback;
    }
    return fallback;
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

// Scientific notation in the C locale ("1e-3"), whatever the user's locale.
QLineEdit* scientificEdit(QWidget* parent) {
    auto* edit = new QLineEdit(parent);
    auto* v = new QDoubleValidator(0.0, std::numeric_limits<double>::max(), 12, edit);
    v->setNotation(QDoubleValidator::ScientificNotation);
    v->setLocale(QLocale::c());
    edit->setValidator(v);
    return edit;
}

QSettings labSettings() {
    return QSettings(QStringLiteral("LiftLab"), QStringLiteral("LiftLab"));
}

// The Landscape tab of `view` set to `dir` when it is an ICNN run with trajectories.
void configureLandscape(RunView* view, const QString& dir) {
    QList<quint64> seeds;
    QStringList labels;
    nlohmann::json spec;
    try {
        spec = read_json_file((dir + QStringLiteral("/spec.json")).toStdString());
    } catch (const std::exception&) {
        // not an ICNN run folder we can read: no landscape
    }
    if (spec.is_object() && spec.contains("seeds") && spec["seeds"].is_array())
        for (const auto& s : spec["seeds"])
            if (s.is_number_unsigned()) seeds << s.get<quint64>();
    if (!seeds.isEmpty()) {
        try {
            for (const auto& l : trajectory_labels(dir.toStdString(), seeds.front()))
                labels << QString::fromStdString(l);
        } catch (const std::exception&) {
            labels.clear();
        }
    }
    view->setLandscapeRun(labels.isEmpty() ? QString() : dir, labels, seeds);
}

QPalette darkLabPalette() {
    QPalette p;
    const QColor window(45, 47, 52), base(32, 34, 38), text(225, 226, 228), mid(70, 72, 78);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Mid, mid);
    p.setColor(QPalette::Highlight, QColor(42, 130, 218));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::Link, QColor(100, 170, 255));
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(QPalette::Disabled, role, QColor(128, 128, 128));
    return p;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), session_(new TrainingSession(this)) {
    setWindowTitle(tr("LiftLab"));

    view_ = new RunView(this);
    curvePanel_ = view_->curves();
    shownMetric_ = kShownMetric;
    curvePanel_->setMetric(kShownMetric);
    curvePanel_->setLogY(true);

    splitter_ = new QSplitter(Qt::Horizontal, this);
    auto* scroll = new QScrollArea(splitter_);
    scroll->setWidget(buildForm());
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setMinimumWidth(280);
    splitter_->addWidget(scroll);
    splitter_->addWidget(view_);
    splitter_->setStretchFactor(0, 0);
    splitter_->setStretchFactor(1, 1);
    splitter_->setSizes({340, 1000});
    setCentralWidget(splitter_);

    statusLabel_ = new QLabel(this);
    statusLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progressBar_ = new QProgressBar(this);
    progressBar_->setRange(0, kProgressScale);
    progressBar_->setValue(0);
    progressBar_->setMaximumWidth(220);
    statusBar()->addWidget(statusLabel_, 1);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setObjectName(QStringLiteral("statusCancel"));
    cancelButton_->setToolTip(tr("Stop the run, or the landscape being computed"));
    connect(cancelButton_, &QPushButton::clicked, this, [this] {
        stopRun();
        view_->cancelLandscape();
    });
    statusBar()->addPermanentWidget(progressBar_);
    statusBar()->addPermanentWidget(cancelButton_);

    historyPanel_ = new RunHistoryPanel(this);
    historyDock_ = new QDockWidget(tr("Run history"), this);
    historyDock_->setObjectName(QStringLiteral("historyDock"));
    historyDock_->setWidget(historyPanel_);
    addDockWidget(Qt::BottomDockWidgetArea, historyDock_);
    resizeDocks({historyDock_}, {170}, Qt::Vertical);
    connect(historyPanel_, &RunHistoryPanel::openRequested, this,
            [this](const QString& dir) { openRun(dir); });
    connect(historyPanel_, &RunHistoryPanel::compareRequested, this,
            [this](const QString& a, const QString& b) { openRun(a, b); });
    connect(historyPanel_, &RunHistoryPanel::revealRequested, this,
            [](const QString& dir) { QDesktopServices::openUrl(QUrl::fromLocalFile(dir)); });
    setAcceptDrops(true);

    connect(view_, &RunView::landscapeProgress, this, [this](double f) {
        if (session_->isRunning()) return;  // the run's progress has the bar
        progressBar_->setValue(static_cast<int>(f * kProgressScale + 0.5));
        cancelButton_->setEnabled(true);
        showMessage(tr("Computing landscapes — %1 %").arg(static_cast<int>(f * 100)));
    });
    connect(view_, &RunView::landscapeDone, this, [this](const QString& message, bool ok) {
        if (session_->isRunning()) return;
        cancelButton_->setEnabled(false);
        showMessage(message, !ok && message.contains(tr("failed")));
    });

    connect(session_, &TrainingSession::pointsArrived, this, &MainWindow::onPoints);
    connect(session_, &TrainingSession::spectraArrived, view_, &RunView::addSpectra);
    connect(session_, &TrainingSession::tracesArrived, view_, &RunView::addTraces);
    connect(session_, &TrainingSession::pausedChanged, this, [this](bool paused) {
        pauseButton_->setText(paused ? tr("Resume") : tr("Pause"));
        pauseAction_->setText(paused ? tr("&Resume") : tr("&Pause"));
        if (paused)
            showMessage(tr("Paused at step %L1 — Resume goes on, Stop ends.").arg(lastStep_));
        else
            showMessage(progressText());
    });
    connect(session_, &TrainingSession::statusChanged, this, &MainWindow::onStatus);
    connect(session_, &TrainingSession::progress, this, &MainWindow::onProgress);
    connect(session_, &TrainingSession::workersChanged, this,
            [this](const QStringList& workers) { workers_ = workers; });
    connect(session_, &TrainingSession::finished, this, &MainWindow::onFinished);
    connect(session_, &TrainingSession::failed, this, &MainWindow::onFailed);

    buildMenus();
    QSettings settings = labSettings();
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1400, 900);
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    splitter_->restoreState(settings.value(QStringLiteral("window/splitter")).toByteArray());
    const QString lastOut = settings.value(QStringLiteral("paths/output")).toString();
    if (!lastOut.isEmpty()) outDirEdit_->setText(lastOut);
    setExportDpi(settings.value(QStringLiteral("export/dpi"), 144).toInt());
    view_->setSmoothing(settings.value(QStringLiteral("plots/smoothing"), 0.0).toDouble());
    view_->restoreSettings(settings);
    setDarkPalette(settings.value(QStringLiteral("view/dark"), false).toBool());
    historyPanel_->setRoot(outDirEdit_->text());
    connect(outDirEdit_, &QLineEdit::editingFinished, this,
            [this] { historyPanel_->setRoot(outDirEdit_->text()); });

    onPresetChanged(presetCombo_->currentIndex());
    setRunning(false);
    showMessage(tr("Ready. Pick a preset and press Start, or open a run from the history."));
    restoreSession();
}

MainWindow::~MainWindow() {
    // First, while every widget still exists: stop the run and join the worker thread.
    session_->disconnect(this);
    delete session_;
    session_ = nullptr;
}

QWidget* MainWindow::buildForm() {
    auto* panel = new QWidget;
    auto* column = new QVBoxLayout(panel);
    form_ = new QWidget(panel);
    auto* formColumn = new QVBoxLayout(form_);
    formColumn->setContentsMargins(0, 0, 0, 0);

    auto* presetBox = new QGroupBox(tr("Experiment"), form_);
    auto* presetLayout = new QVBoxLayout(presetBox);
    presetCombo_ = new QComboBox(presetBox);
    presetCombo_->setObjectName(QStringLiteral("preset"));
    // Both families, each under a header that cannot be selected.
    const std::pair<QString, std::function<bool(const std::string&)>> families[] = {
        {tr("— Closed-form last layer —"),
         [](const std::string& n) { return n.rfind("cf-", 0) == 0; }},
        {tr("— ICNN lifter —"), [](const std::string& n) { return n.rfind("cf-", 0) != 0; }}};
    for (const auto& [header, member] : families) {
        presetCombo_->addItem(header);
        if (auto* model = qobject_cast<QStandardItemModel*>(presetCombo_->model())) {
            QStandardItem* item = model->item(presetCombo_->count() - 1);
            item->setFlags(item->flags() & ~(Qt::ItemIsSelectable | Qt::ItemIsEnabled));
            QFont f = item->font();
            f.setItalic(true);
            item->setFont(f);
        }
        for (const auto& p : builtin_presets()) {
            if (!member(p.name)) continue;
            presetCombo_->addItem(QString::fromStdString(p.name));
            presetCombo_->setItemData(presetCombo_->count() - 1,
                                      QString::fromStdString(p.description), Qt::ToolTipRole);
        }
    }
    presetCombo_->setCurrentIndex(1);
    presetDescription_ = new QLabel(presetBox);
    presetDescription_->setWordWrap(true);
    presetDescription_->setStyleSheet(QStringLiteral("color: #555;"));
    presetLayout->addWidget(presetCombo_);
    presetLayout->addWidget(presetDescription_);
    formColumn->addWidget(presetBox);

    methodsBox_ = new QGroupBox(tr("Methods"), form_);
    methodsLayout_ = new QVBoxLayout(methodsBox_);
    formColumn->addWidget(methodsBox_);

    auto* trainBox = new QGroupBox(tr("Training"), form_);
    auto* trainForm = new QFormLayout(trainBox);
    batchSpin_ = new QSpinBox(trainBox);
    batchSpin_->setObjectName(QStringLiteral("batchSize"));
    batchSpin_->setRange(1, 1000000);
    seedSpin_ = new QSpinBox(trainBox);
    seedSpin_->setObjectName(QStringLiteral("seed"));
    seedSpin_->setRange(0, std::numeric_limits<int>::max());
    stepsSpin_ = new QSpinBox(trainBox);
    stepsSpin_->setObjectName(QStringLiteral("steps"));
    stepsSpin_->setRange(1, 100000000);
    stepsSpin_->setGroupSeparatorShown(true);
    optimizerCombo_ = new QComboBox(trainBox);
    optimizerCombo_->setObjectName(QStringLiteral("optimizer"));
    optimizerCombo_->addItems({QStringLiteral("adam"), QStringLiteral("sgd")});
    optimizerCombo_->setToolTip(tr("Backbone optimizer of the closed-form (cf-*) methods"));
    trainForm->addRow(tr("Batch size"), batchSpin_);
    trainForm->addRow(tr("Seed"), seedSpin_);
    trainForm->addRow(tr("Steps"), stepsSpin_);
    trainForm->addRow(tr("Backbone optimizer"), optimizerCombo_);
    formColumn->addWidget(trainBox);

    auto* cfBox = new QGroupBox(tr("Closed-form last layer"), form_);
    auto* cfForm = new QFormLayout(cfBox);
    lambdaEdit_ = scientificEdit(cfBox);
    lambdaEdit_->setObjectName(QStringLiteral("lambda"));
    lambdaEdit_->setToolTip(tr("Proximal strength λ of every cf-prox method (e.g. 1, 1e-2)"));
    betaEdit_ = scientificEdit(cfBox);
    betaEdit_->setObjectName(QStringLiteral("beta"));
    betaEdit_->setToolTip(tr("Ridge strength β of every cf-ridge and cf-full method (e.g. 1e-3)"));
    cfForm->addRow(tr("λ (cf-prox)"), lambdaEdit_);
    cfForm->addRow(tr("β (cf-ridge)"), betaEdit_);
    formColumn->addWidget(cfBox);

    auto* outBox = new QGroupBox(tr("Output"), form_);
    auto* outLayout = new QHBoxLayout(outBox);
    outDirEdit_ = new QLineEdit(QDir::current().filePath(QStringLiteral("runs")), outBox);
    outDirEdit_->setObjectName(QStringLiteral("outputDir"));
    outDirEdit_->setToolTip(tr("Each run writes a new folder here"));
    auto* browse = new QToolButton(outBox);
    browse->setText(QStringLiteral("…"));
    connect(browse, &QToolButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Output folder"), outDirEdit_->text());
        if (!dir.isEmpty()) outDirEdit_->setText(dir);
    });
    outLayout->addWidget(outDirEdit_, 1);
    outLayout->addWidget(browse);
    formColumn->addWidget(outBox);

    auto* allBox = new QGroupBox(tr("All settings"), form_);
    allBox->setCheckable(true);
    allBox->setChecked(false);
    allBox->setToolTip(tr("Every setting of the preset, editable; applied over the fields above"));
    auto* allLayout = new QVBoxLayout(allBox);
    specEditor_ = new SpecEditor(allBox);
    specEditor_->setMinimumHeight(220);
    specEditor_->setVisible(false);
    allLayout->addWidget(specEditor_);
    connect(allBox, &QGroupBox::toggled, specEditor_, &QWidget::setVisible);
    formColumn->addWidget(allBox);
    column->addWidget(form_);
    auto* plotBox = new QGroupBox(tr("Plot"), panel);
    auto* plotLayout = new QFormLayout(plotBox);
    metricCombo_ = new QComboBox(plotBox);
    metricCombo_->setObjectName(QStringLiteral("metric"));
    metricCombo_->addItem(kShownMetric);  // further metrics are added as a run logs them
    metricCombo_->setToolTip(tr("Metric shown in the plot; every logged metric can be chosen"));
    plotLayout->addRow(tr("Metric"), metricCombo_);
    connect(metricCombo_, &QComboBox::currentTextChanged, this, &MainWindow::showMetric);
    // Outside form_: the shown metric can change while a run goes on.
    column->addWidget(plotBox);

    auto* buttons = new QHBoxLayout;
    startButton_ = new QPushButton(tr("Start"), panel);
    startButton_->setObjectName(QStringLiteral("start"));
    startButton_->setDefault(true);
    stopButton_ = new QPushButton(tr("Stop"), panel);
    stopButton_->setObjectName(QStringLiteral("stop"));
    queueButton_ = new QPushButton(tr("Queue"), panel);
    queueButton_->setObjectName(QStringLiteral("queue"));
    queueButton_->setToolTip(tr("Add this experiment to the run queue (starts now if idle)"));
    pauseButton_ = new QPushButton(tr("Pause"), panel);
    pauseButton_->setObjectName(QStringLiteral("pause"));
    buttons->addWidget(startButton_);
    buttons->addWidget(queueButton_);
    buttons->addWidget(pauseButton_);
    buttons->addWidget(stopButton_);
    column->addLayout(buttons);
    queueList_ = new QListWidget(panel);
    queueList_->setObjectName(QStringLiteral("queueList"));
    queueList_->setMaximumHeight(90);
    queueList_->setToolTip(tr("Queued experiments, run in order; Delete removes the selected one"));
    auto* removeQueued = new QAction(tr("Remove from queue"), queueList_);
    removeQueued->setShortcut(QKeySequence::Delete);
    removeQueued->setShortcutContext(Qt::WidgetShortcut);
    queueList_->addAction(removeQueued);
    queueList_->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(removeQueued, &QAction::triggered, this, [this] {
        const int row = queueList_->currentRow();
        if (row < 0 || row >= queue_.size()) return;
        queue_.remove(row);
        refreshQueueView();
    });
    column->addWidget(queueList_);
    connect(queueButton_, &QPushButton::clicked, this, [this] { queueRun(); });
    connect(pauseButton_, &QPushButton::clicked, this, &MainWindow::togglePause);
    column->addStretch(1);

    connect(presetCombo_, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &MainWindow::onPresetChanged);
    connect(startButton_, &QPushButton::clicked, this, &MainWindow::startRun);
    connect(stopButton_, &QPushButton::clicked, this, &MainWindow::stopRun);
    return panel;
}

bool MainWindow::selectPreset(const QString& name) {
    const int index = presetCombo_->findText(name);
    if (index < 0) return false;
    if (index == presetCombo_->currentIndex())
        onPresetChanged(index);  // reload the preset's values into the form
    else
        presetCombo_->setCurrentIndex(index);
    return true;
}

void MainWindow::onPresetChanged(int index) {
    const Preset* preset = findPreset(presetCombo_->itemText(index));
    if (!preset) return;
    const nlohmann::json& j = preset->spec;
    presetDescription_->setText(QString::fromStdString(preset->description));
    specEditor_->setSpec(j);
    batchSpin_->setValue(j.value("batch_size", 32));
    stepsSpin_->setValue(j.value("steps", 2000));
    const auto seeds = j.value("seeds", nlohmann::json::array({0}));
    seedSpin_->setValue(seeds.empty() ? 0 : seeds[0].get<int>());
    if (j.contains("optimizer"))
        optimizerCombo_->setCurrentText(
            QString::fromStdString(j["optimizer"].value("kind", std::string("adam"))));

    // A preset that sweeps the batch size owns that value.
    const bool sweepsBatch =
        j.contains("sweep") && j["sweep"].value("key", std::string()) == "batch_size";
    batchSpin_->setEnabled(!sweepsBatch);
    batchSpin_->setToolTip(sweepsBatch ? tr("Swept by this preset") : QString());

    bool hasProx = false, hasRidge = false;
    const double lambda = firstMethodValue(j, {"cf-prox"}, "lambda", 1.0, &hasProx);
    const double beta = firstMethodValue(j, {"cf-ridge", "cf-full"}, "beta", 1e-3, &hasRidge);
    lambdaEdit_->setText(QString::number(lambda, 'g', 6));
    betaEdit_->setText(QString::number(beta, 'g', 6));
    lambdaEdit_->setEnabled(hasProx);
    betaEdit_->setEnabled(hasRidge);
    rebuildMethodBoxes();
}

void MainWindow::rebuildMethodBoxes() {
    for (QCheckBox* box : std::as_const(methodBoxes_)) box->deleteLater();
    methodBoxes_.clear();
    const Preset* preset = findPreset(presetCombo_->currentText());
    if (!preset || !preset->spec.contains("methods")) return;
    for (const auto& m : preset->spec["methods"]) {
        const QString label = methodLabel(m);
        auto* box = new QCheckBox(label, methodsBox_);
        box->setChecked(true);
        box->setIcon(swatch(methodColor(label)));
        methodsLayout_->addWidget(box);
        methodBoxes_.push_back(box);
    }
}

void MainWindow::setSteps(int steps) {
    stepsSpin_->setValue(steps);
}

void MainWindow::setOutputDir(const QString& dir) {
    outDirEdit_->setText(dir);
    historyPanel_->setRoot(dir);
}

QStringList MainWindow::methodLabels() const {
    QStringList labels;
    for (const QCheckBox* box : methodBoxes_) labels << box->text();
    return labels;
}

void MainWindow::setMethodChecked(const QString& label, bool checked) {
    for (QCheckBox* box : std::as_const(methodBoxes_))
        if (box->text() == label) box->setChecked(checked);
}

bool MainWindow::buildSpec(nlohmann::json* out, QString* title) {
    const Preset* preset = findPreset(presetCombo_->currentText());
    if (!preset) {
        showMessage(tr("Pick a preset first."), /*error=*/true);
        return false;
    }

    bool lambdaOk = true, betaOk = true;
    const double lambda = QLocale::c().toDouble(lambdaEdit_->text().trimmed(), &lambdaOk);
    const double beta = QLocale::c().toDouble(betaEdit_->text().trimmed(), &betaOk);
    if (lambdaEdit_->isEnabled() && !lambdaOk) {
        showMessage(tr("λ: enter a number such as 1 or 1e-2."), true);
        return false;
    }
    if (betaEdit_->isEnabled() && !betaOk) {
        showMessage(tr("β: enter a number such as 1e-3."), true);
        return false;
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
        const std::string name = m.value("name", std::string());
        if (name == "cf-prox" && lambdaOk) method["lambda"] = lambda;
        if ((name == "cf-ridge" || name == "cf-full") && betaOk) method["beta"] = beta;
        methods.push_back(method);
    }
    if (methods.empty()) {
        showMessage(tr("Tick at least one method to run."), /*error=*/true);
        return false;
    }
    j["methods"] = methods;
    QString editError;
    if (!specEditor_->apply(j, &editError)) {
        showMessage(tr("Cannot start: %1").arg(editError), true);
        return false;
    }

    ExperimentSpec spec;
    try {
        spec = parse_spec(j);
    } catch (const std::exception& e) {
        // SpecError names the key: "spec key 'batch_size': is larger than task.n_train (4096)".
        showMessage(tr("Cannot start: %1").arg(QString::fromStdString(e.what())), true);
        return false;
    }
    const QString setting = spec.sweep.key.empty()
                                ? tr("batch %1").arg(spec.batch_size)
                                : tr("sweep over %1").arg(QString::fromStdString(spec.sweep.key));
    *title =
        tr("%1 — %2, seed %3").arg(presetCombo_->currentText(), setting).arg(seedSpin_->value());
    *out = j;
    return true;
}

void MainWindow::startRun() {
    if (session_->isRunning()) return;
    nlohmann::json j;
    QString title;
    if (!buildSpec(&j, &title)) return;
    startSpec(j, outDirEdit_->text().trimmed(), title);
}

bool MainWindow::queueRun() {
    nlohmann::json j;
    QString title;
    if (!buildSpec(&j, &title)) return false;
    if (!session_->isRunning()) {
        startSpec(j, outDirEdit_->text().trimmed(), title);
        return true;
    }
    queue_.push_back({j, outDirEdit_->text().trimmed(), title});
    refreshQueueView();
    showMessage(tr("Queued %1 (%2 waiting).").arg(title).arg(queue_.size()));
    return true;
}

int MainWindow::queuedRuns() const {
    return queue_.size();
}

void MainWindow::refreshQueueView() {
    queueList_->clear();
    for (const auto& q : std::as_const(queue_)) queueList_->addItem(q.title);
    queueList_->setVisible(!queue_.isEmpty());
    saveSession();
}

void MainWindow::startNextQueued() {
    if (session_->isRunning() || queue_.isEmpty()) return;
    const QueuedRun next = queue_.takeFirst();
    refreshQueueView();
    startSpec(next.spec, next.outDir, next.title);
}

void MainWindow::startSpec(const nlohmann::json& j, const QString& outDir, const QString& title) {
    ExperimentSpec spec;
    try {
        spec = parse_spec(j);
    } catch (const std::exception& e) {
        showMessage(tr("Cannot start: %1").arg(QString::fromStdString(e.what())), true);
        return;
    }
    opened_.reset();
    compared_.reset();
    openedRun_.clear();
    curvePanel_->clear();
    runTitle_ = title;
    curvePanel_->setMetric(shownMetric_);
    curvePanel_->setLogY(metricPrefersLogAxis(shownMetric_.toStdString()));
    curvePanel_->setTitle(runTitle_);
    view_->beginRun(runTitle_);
    view_->setLandscapeRun(QString(), {}, {});
    history_.clear();
    liveSeed_.clear();
    liveFirstSeed_ = spec.seeds.empty() ? std::optional<quint64>() : spec.seeds.front();
    seriesNotes_.clear();
    // Legend in the spec's order, from the first tick on (a sweep's labels come as they arrive).
    if (spec.sweep.key.empty())
        for (const auto& m : spec.methods)
            curvePanel_->appendPoints(QString::fromStdString(m.label), {}, {});
    methodNotes_.clear();
    lastRunDir_.clear();
    lastStep_ = 0;
    totalSteps_ = spec.steps;
    progressBar_->setValue(0);
    if (!session_->start(spec, outDir)) return;
    // The history lists the folder the run writes into, so the new run shows up there.
    if (QDir::cleanPath(QFileInfo(outDir).absoluteFilePath()) != historyPanel_->root())
        historyPanel_->setRoot(outDir);
    setRunning(true);
    showMessage(tr("Starting %1…").arg(title));
}

void MainWindow::togglePause() {
    if (!session_->isRunning()) return;
    if (session_->isPaused())
        session_->resume();
    else
        session_->pause();
}

void MainWindow::stopRun() {
    if (!session_->isRunning()) return;
    session_->stop();
    stopButton_->setEnabled(false);
    showMessage(tr("Stopping…"));
}

QString MainWindow::statusText() const {
    return statusLabel_->text();
}

void MainWindow::setRunning(bool running) {
    form_->setEnabled(!running);
    startButton_->setEnabled(!running);
    stopButton_->setEnabled(running);
    pauseButton_->setEnabled(running);
    pauseButton_->setText(tr("Pause"));
    if (pauseAction_) {
        pauseAction_->setEnabled(running);
        pauseAction_->setText(tr("&Pause"));
    }
    cancelButton_->setEnabled(running);
}

void MainWindow::showMessage(const QString& text, bool error) {
    statusLabel_->setText(text);
    statusLabel_->setStyleSheet(error ? QStringLiteral("color: #b00020; font-weight: bold;")
                                      : QString());
}

QString MainWindow::progressText() const {
    QString text =
        lastStep_ < 0
            ? tr("Preparing data — %1 %").arg(progressBar_->value() * 100 / kProgressScale)
        : workers_.size() > 1 ? tr("Running — %1").arg(workers_.join(QStringLiteral(", ")))
                              : tr("Running — step %L1 / %L2").arg(lastStep_).arg(totalSteps_);
    if (!methodNotes_.isEmpty())
        text += QStringLiteral(" · ") + methodNotes_.join(QStringLiteral(" · "));
    return text;
}

void MainWindow::onPoints(const QVector<SessionPoint>& points) {
    history_ += points;
    view_->addPoints(points);
    for (const auto& p : points)
        if (metricCombo_->findText(p.metric) < 0) metricCombo_->addItem(p.metric);
    appendToPanel(points);
}

void MainWindow::showMetric(const QString& metric) {
    if (metric.isEmpty() || metric == shownMetric_) return;
    shownMetric_ = metric;
    if (metricCombo_->currentText() != metric) {
        if (metricCombo_->findText(metric) < 0) metricCombo_->addItem(metric);
        metricCombo_->setCurrentText(metric);
    }
    redrawCurves();
}

void MainWindow::redrawCurves() {
    liveSeed_.clear();
    const std::string metric = shownMetric_.toStdString();
    curvePanel_->clear();
    curvePanel_->setMetric(shownMetric_);
    curvePanel_->setLogY(metricPrefersLogAxis(metric));
    curvePanel_->setTitle(runTitle_);
    if (opened_) {
        const QString suffixA =
            compared_ ? QStringLiteral(" [%1]").arg(QString::fromStdString(opened_->name))
                      : QString();
        feedCurves(*curvePanel_, *opened_, metric, suffixA);
        if (compared_) {
            QString nameB = QString::fromStdString(compared_->name);
            if (nameB == QString::fromStdString(opened_->name))
                nameB = QFileInfo(QString::fromStdString(compared_->dir)).fileName();
            feedCurves(*curvePanel_, *compared_, metric, QStringLiteral(" [%1]").arg(nameB));
        }
    } else {
        appendToPanel(history_);
        for (auto it = seriesNotes_.cbegin(); it != seriesNotes_.cend(); ++it)
            curvePanel_->setSeriesNote(it.key(), it.value());
    }
    curvePanel_->rescale();
}

void MainWindow::appendToPanel(const QVector<SessionPoint>& points) {
    // Group per method (in arrival order) so each curve gets one append per drain.
    QVector<QString> order;
    QHash<QString, QPair<QVector<double>, QVector<double>>> byMethod;
    for (const auto& p : points) {
        if (p.metric != shownMetric_) continue;
        // Live curves follow each method's first seed; a run with several seeds is shown as
        // mean ± sd from its run folder when it ends.
        auto seed = liveSeed_.find(p.method);
        // Seeds may train in parallel: follow the spec's first seed, not whichever reports first.
        if (seed == liveSeed_.end())
            seed = liveSeed_.insert(p.method, liveFirstSeed_.value_or(p.seed));
        if (seed.value() != p.seed) continue;
        auto it = byMethod.find(p.method);
        if (it == byMethod.end()) {
            order.push_back(p.method);
            it = byMethod.insert(p.method, {});
        }
        it->first.push_back(p.step);
        it->second.push_back(p.value);
    }
    for (const QString& method : std::as_const(order))
        curvePanel_->appendPoints(method, byMethod[method].first, byMethod[method].second);
}

void MainWindow::onStatus(const SessionStatus& s) {
    if (s.status != QLatin1String("diverged") && s.status != QLatin1String("failed")) return;
    const QString note = tr("%1 at step %2").arg(s.status).arg(s.step);
    curvePanel_->setSeriesNote(s.method, note);
    seriesNotes_[s.method] = note;
    QString message = s.method + QLatin1Char(' ') + note;
    if (s.status == QLatin1String("failed") && !s.reason.isEmpty())
        message += QStringLiteral(" (") + s.reason + QLatin1Char(')');
    methodNotes_ << message;
    if (session_->isRunning() && stopButton_->isEnabled()) showMessage(progressText());
}

void MainWindow::onProgress(double fraction, int step, int total) {
    progressBar_->setValue(static_cast<int>(fraction * kProgressScale + 0.5));
    lastStep_ = step;
    totalSteps_ = total;
    if (session_->isRunning() && stopButton_->isEnabled()) showMessage(progressText());
}

void MainWindow::onFinished(const QString& status, const QString& runDir) {
    setRunning(false);
    lastRunDir_ = runDir;
    curvePanel_->rescale();
    QString text;
    if (status == QLatin1String("cancelled"))
        text = tr("Stopped (cancelled) at step %L1 of %L2.").arg(lastStep_).arg(totalSteps_);
    else if (status == QLatin1String("ok"))
        text = tr("Finished: %L1 steps.").arg(totalSteps_);
    else
        text = tr("Finished: every method %1.").arg(status);
    if (status == QLatin1String("ok")) progressBar_->setValue(kProgressScale);
    if (!methodNotes_.isEmpty())
        text += QLatin1Char(' ') + methodNotes_.join(QStringLiteral("; ")) + QLatin1Char('.');
    if (!runDir.isEmpty()) text += tr(" Run folder: %1").arg(QDir::toNativeSeparators(runDir));
    bool warned = false;
    if (!runDir.isEmpty()) {
        // Everything the run folder holds (σ²_Jac, dwells, seeds' spread) goes to the panels;
        // the curves keep the live history.
        try {
            auto run = std::make_shared<RunFolderData>(read_run_folder(runDir.toStdString()));
            // Warnings of the run (an ESS below 1 % of the importance draws: log Z and the
            // test NLL are unreliable) go in the status line, shown as an error.
            for (const auto& w : run->warnings) {
                text += tr(" Warning: %1.").arg(QString::fromStdString(w));
                warned = true;
            }
            view_->showRun(*run);
            configureLandscape(view_, runDir);
            bool severalSeeds = false;
            for (const auto& [method, finals] : run->finals)
                for (const auto& [metric, values] : finals)
                    severalSeeds = severalSeeds || values.size() > 1;
            if (severalSeeds) {  // the curves become mean ± sd over the seeds
                opened_ = run;
                openedRun_ = runDir;
                redrawCurves();
            }
        } catch (const std::exception&) {
            // A run folder that cannot be read back costs only the extra panels.
        }
        historyPanel_->refresh();
        historyPanel_->selectRun(runDir);
    }
    showMessage(text, /*error=*/warned || status == QLatin1String("diverged") ||
                          status == QLatin1String("failed"));
    Q_EMIT runEnded(status != QLatin1String("diverged") && status != QLatin1String("failed"));
    QTimer::singleShot(0, this, &MainWindow::startNextQueued);
}

void MainWindow::onFailed(const QString& message) {
    setRunning(false);
    progressBar_->setValue(0);
    showMessage(tr("Run failed: %1").arg(message), /*error=*/true);
    Q_EMIT runEnded(false);
    QTimer::singleShot(0, this, &MainWindow::startNextQueued);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings = labSettings();
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/splitter"), splitter_->saveState());
    settings.setValue(QStringLiteral("paths/output"), outDirEdit_->text());
    settings.setValue(QStringLiteral("plots/smoothing"), view_->smoothing());
    view_->saveSettings(settings);
    saveSession();
    // Closing mid-run stops the run; the session joins its thread when it is destroyed.
    session_->stop();
    QMainWindow::closeEvent(event);
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open run folder…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Open a run folder"),
            labSettings().value(QStringLiteral("paths/open"), outDirEdit_->text()).toString());
        if (dir.isEmpty()) return;
        labSettings().setValue(QStringLiteral("paths/open"), QFileInfo(dir).path());
        openRun(dir);
    });
    open->setShortcut(QKeySequence::Open);
    file->addAction(tr("&Compare with run folder…"), this, [this] {
        if (openedRun_.isEmpty()) {
            showMessage(tr("Open a run first, then pick the run to compare it with."), true);
            return;
        }
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Compare with"),
                                                              QFileInfo(openedRun_).path());
        if (!dir.isEmpty()) openRun(openedRun_, dir);
    });
    file->addSeparator();
    QAction* exportOne = file->addAction(tr("&Export panel…"), this, [this] {
        const QString last = labSettings().value(QStringLiteral("paths/export")).toString();
        const QString suggested =
            QDir(last.isEmpty() ? QDir::currentPath() : last)
                .filePath(view_->tabKey(view_->currentIndex()) + QStringLiteral(".png"));
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export panel"), suggested, tr("PNG (*.png);;SVG (*.svg);;PDF (*.pdf)"));
        if (path.isEmpty()) return;
        labSettings().setValue(QStringLiteral("paths/export"), QFileInfo(path).path());
        if (exportCurrentPanel(path))
            showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
        else
            showMessage(tr("Could not write %1 (png, svg or pdf)").arg(path), true);
    });
    exportOne->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    QAction* exportAll = file->addAction(tr("Export &all panels…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Export every panel into"),
            labSettings().value(QStringLiteral("paths/export"), QDir::currentPath()).toString());
        if (dir.isEmpty()) return;
        bool ok = false;
        const QString format = QInputDialog::getItem(
            this, tr("Format"), tr("Format of the figures"),
            {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}, 0, false, &ok);
        if (!ok) return;
        labSettings().setValue(QStringLiteral("paths/export"), dir);
        const QStringList files = exportAllPanels(dir, format);
        showMessage(tr("Wrote %n figure(s) to %1", nullptr, files.size())
                        .arg(QDir::toNativeSeparators(dir)),
                    files.isEmpty());
    });
    exportAll->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    file->addAction(tr("Export curves as &CSV…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Export curves"),
            QDir(
                labSettings().value(QStringLiteral("paths/export"), QDir::currentPath()).toString())
                .filePath(shownMetric_ + QStringLiteral(".csv")),
            tr("CSV (*.csv)"));
        if (path.isEmpty()) return;
        if (exportCurvesCsv(path))
            showMessage(tr("Wrote %1").arg(QDir::toNativeSeparators(path)));
        else
            showMessage(tr("Could not write %1").arg(path), true);
    });
    QAction* copy = file->addAction(tr("Cop&y plot"), this, &MainWindow::copyPlotToClipboard);
    copy->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    file->addAction(tr("Export &resolution…"), this, [this] {
        bool ok = false;
        const int dpi = QInputDialog::getInt(this, tr("PNG resolution"),
                                             tr("Dots per inch of exported PNG figures"),
                                             exportDpi_, 48, 600, 24, &ok);
        if (ok) setExportDpi(dpi);
    });
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    QAction* start = run->addAction(tr("&Start"), this, &MainWindow::startRun);
    start->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
    run->addAction(tr("Add to &queue"), this, [this] { queueRun(); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
    pauseAction_ = run->addAction(tr("&Pause"), this, &MainWindow::togglePause);
    pauseAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    pauseAction_->setEnabled(false);
    QAction* stop = run->addAction(tr("S&top"), this, &MainWindow::stopRun);
    stop->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
    run->addSeparator();
    run->addAction(tr("Compute &landscapes"), this, [this] {
        view_->setCurrentIndex(RunView::LandscapeTab);
        if (!view_->computeLandscape()) showMessage(view_->landscapeStatus(), true);
    });

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < RunView::TabCount; ++i) {
        QAction* a =
            viewMenu->addAction(view_->tabText(i), this, [this, i] { view_->setCurrentIndex(i); });
        a->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
    }
    viewMenu->addSeparator();
    viewMenu->addAction(historyDock_->toggleViewAction());
    darkAction_ = viewMenu->addAction(tr("&Dark palette"));
    darkAction_->setCheckable(true);
    connect(darkAction_, &QAction::toggled, this, &MainWindow::setDarkPalette);
}

bool MainWindow::openRun(const QString& runDir, const QString& compareDir) {
    if (session_->isRunning()) {
        showMessage(tr("A run is going on: stop it (or wait) before opening another."), true);
        return false;
    }
    std::shared_ptr<RunFolderData> a, b;
    try {
        a = std::make_shared<RunFolderData>(read_run_folder(runDir.toStdString()));
        if (!compareDir.isEmpty())
            b = std::make_shared<RunFolderData>(read_run_folder(compareDir.toStdString()));
    } catch (const std::exception& e) {
        showMessage(tr("Cannot open: %1").arg(QString::fromStdString(e.what())), true);
        return false;
    }
    opened_ = a;
    compared_ = b;
    openedRun_ = runDir;
    lastRunDir_ = runDir;
    history_.clear();
    seriesNotes_.clear();
    runTitle_ = QString::fromStdString(a->title);
    if (b) runTitle_ += tr(" vs %1").arg(QString::fromStdString(b->title));
    for (const auto* run : {a.get(), b.get()})
        if (run)
            for (const auto& m : run->metric_names())
                if (metricCombo_->findText(QString::fromStdString(m)) < 0)
                    metricCombo_->addItem(QString::fromStdString(m));
    if (!a->metrics.count(shownMetric_.toStdString())) shownMetric_ = kShownMetric;
    metricCombo_->setCurrentText(shownMetric_);
    redrawCurves();
    view_->showRun(*a);
    configureLandscape(view_, runDir);
    // The form shows the run's preset, and the history lists the run's neighbours when its own
    // folder has no runs.
    if (presetCombo_->findText(QString::fromStdString(a->name)) >= 0 && form_->isEnabled())
        selectPreset(QString::fromStdString(a->name));
    if (historyPanel_->runCount() == 0) historyPanel_->setRoot(QFileInfo(runDir).path());
    historyPanel_->selectRun(runDir);
    progressBar_->setValue(0);
    QString text =
        b ? tr("Comparing %1 with %2")
                .arg(QDir::toNativeSeparators(runDir), QDir::toNativeSeparators(compareDir))
          : tr("Opened %1 (%2)")
                .arg(QDir::toNativeSeparators(runDir), a->status.empty()
                                                           ? tr("no summary: incomplete")
                                                           : QString::fromStdString(a->status));
    for (const auto& w : a->warnings) text += tr(" Warning: %1.").arg(QString::fromStdString(w));
    showMessage(text, /*error=*/!a->warnings.empty());
    saveSession();
    return true;
}

QSize MainWindow::exportSize() const {
    const QWidget* w = view_->currentWidget();
    return w ? w->size().expandedTo(QSize(640, 400)) : QSize(1000, 620);
}

bool MainWindow::exportCurrentPanel(const QString& path) {
    const QSize size = exportSize();
    return view_->exportTab(view_->currentIndex(), path, size.width(), size.height());
}

QStringList MainWindow::exportAllPanels(const QString& dir, const QString& format) {
    const QSize size = exportSize();
    return view_->exportAll(dir, format, size.width(), size.height());
}

bool MainWindow::exportCurvesCsv(const QString& path) {
    return curvePanel_->exportCsv(path);
}

void MainWindow::copyPlotToClipboard() {
    QCustomPlot* plot = view_->currentPlot();
    if (!plot) return;
    const QSize size = exportSize();
    QApplication::clipboard()->setPixmap(
        plot->toPixmap(size.width(), size.height(), exportDpi_ / 96.0));
    plot->replot(QCustomPlot::rpQueuedReplot);
    showMessage(
        tr("Copied the %1 plot to the clipboard.").arg(view_->tabText(view_->currentIndex())));
}

void MainWindow::setExportDpi(int dpi) {
    exportDpi_ = std::clamp(dpi, 48, 600);
    setExportPixelRatio(exportDpi_ / 96.0);
    labSettings().setValue(QStringLiteral("export/dpi"), exportDpi_);
}

void MainWindow::setDarkPalette(bool on) {
    dark_ = on;
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(on ? darkLabPalette() : QApplication::style()->standardPalette());
    if (darkAction_ && darkAction_->isChecked() != on) darkAction_->setChecked(on);
    presetDescription_->setStyleSheet(on ? QStringLiteral("color: #aaa;")
                                         : QStringLiteral("color: #555;"));
    labSettings().setValue(QStringLiteral("view/dark"), on);
    // Plots keep their light background: figures look the same on screen and on paper.
}

void MainWindow::saveSession() {
    QSettings settings = labSettings();
    QStringList queued;
    for (const auto& q : std::as_const(queue_)) {
        nlohmann::json j = {{"spec", q.spec},
                            {"out_dir", q.outDir.toStdString()},
                            {"title", q.title.toStdString()}};
        queued << QString::fromStdString(j.dump());
    }
    settings.setValue(QStringLiteral("session/queue"), queued);
    settings.setValue(QStringLiteral("session/opened"), openedRun_);
}

void MainWindow::restoreSession() {
    QSettings settings = labSettings();
    for (const QString& item : settings.value(QStringLiteral("session/queue")).toStringList()) {
        const auto j = nlohmann::json::parse(item.toStdString(), nullptr, false);
        if (!j.is_object() || !j.contains("spec")) continue;
        queue_.push_back({j["spec"], QString::fromStdString(j.value("out_dir", "runs")),
                          QString::fromStdString(j.value("title", "queued run"))});
    }
    refreshQueueView();
    if (!queue_.isEmpty())
        showMessage(
            tr("%n queued run(s) restored from the last session; Start or Queue runs "
               "them in order.",
               nullptr, queue_.size()));
    const QString opened = settings.value(QStringLiteral("session/opened")).toString();
    if (!opened.isEmpty() && QFileInfo::exists(opened + QStringLiteral("/metrics.csv")))
        openRun(opened);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!RunHistoryPanel::runFolderFromMime(event->mimeData()).isEmpty())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString dir = RunHistoryPanel::runFolderFromMime(event->mimeData());
    if (dir.isEmpty()) return;
    event->acceptProposedAction();
    openRun(dir);
}

}  // namespace liftlab
