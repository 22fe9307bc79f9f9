#include "main_window.h"

#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDoubleValidator>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHash>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPainter>
#include <QPixmap>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>
#include <limits>

#include "core/errors.h"
#include "loss_curve_panel.h"
#include "method_colors.h"
#include "spec/experiment_spec.h"
#include "spec/presets.h"
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

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), session_(new TrainingSession(this)) {
    setWindowTitle(tr("LiftLab"));

    curvePanel_ = new LossCurvePanel(this);
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
    splitter_->addWidget(curvePanel_);
    splitter_->setStretchFactor(0, 0);
    splitter_->setStretchFactor(1, 1);
    splitter_->setSizes({300, 900});
    setCentralWidget(splitter_);

    statusLabel_ = new QLabel(this);
    statusLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progressBar_ = new QProgressBar(this);
    progressBar_->setRange(0, kProgressScale);
    progressBar_->setValue(0);
    progressBar_->setMaximumWidth(220);
    statusBar()->addWidget(statusLabel_, 1);
    statusBar()->addPermanentWidget(progressBar_);

    connect(session_, &TrainingSession::pointsArrived, this, &MainWindow::onPoints);
    connect(session_, &TrainingSession::statusChanged, this, &MainWindow::onStatus);
    connect(session_, &TrainingSession::progress, this, &MainWindow::onProgress);
    connect(session_, &TrainingSession::finished, this, &MainWindow::onFinished);
    connect(session_, &TrainingSession::failed, this, &MainWindow::onFailed);

    QSettings settings(QStringLiteral("LiftLab"), QStringLiteral("LiftLab"));
    if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray()))
        resize(1280, 800);
    splitter_->restoreState(settings.value(QStringLiteral("window/splitter")).toByteArray());

    onPresetChanged(presetCombo_->currentIndex());
    setRunning(false);
    showMessage(tr("Ready. Pick a preset and press Start."));
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
    for (const auto& p : builtin_presets()) {
        presetCombo_->addItem(QString::fromStdString(p.name));
        presetCombo_->setItemData(presetCombo_->count() - 1, QString::fromStdString(p.description),
                                  Qt::ToolTipRole);
    }
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
    buttons->addWidget(startButton_);
    buttons->addWidget(stopButton_);
    column->addLayout(buttons);
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

void MainWindow::startRun() {
    if (session_->isRunning()) return;
    const Preset* preset = findPreset(presetCombo_->currentText());
    if (!preset) {
        showMessage(tr("Pick a preset first."), /*error=*/true);
        return;
    }

    bool lambdaOk = true, betaOk = true;
    const double lambda = QLocale::c().toDouble(lambdaEdit_->text().trimmed(), &lambdaOk);
    const double beta = QLocale::c().toDouble(betaEdit_->text().trimmed(), &betaOk);
    if (lambdaEdit_->isEnabled() && !lambdaOk) {
        showMessage(tr("λ: enter a number such as 1 or 1e-2."), true);
        return;
    }
    if (betaEdit_->isEnabled() && !betaOk) {
        showMessage(tr("β: enter a number such as 1e-3."), true);
        return;
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
        return;
    }
    j["methods"] = methods;

    ExperimentSpec spec;
    try {
        spec = parse_spec(j);
    } catch (const std::exception& e) {
        // SpecError names the key: "spec key 'batch_size': is larger than task.n_train (4096)".
        showMessage(tr("Cannot start: %1").arg(QString::fromStdString(e.what())), true);
        return;
    }

    const QString outDir = outDirEdit_->text().trimmed();
    curvePanel_->clear();
    const QString setting = spec.sweep.key.empty()
                                ? tr("batch %1").arg(spec.batch_size)
                                : tr("sweep over %1").arg(QString::fromStdString(spec.sweep.key));
    runTitle_ =
        tr("%1 — %2, seed %3").arg(presetCombo_->currentText(), setting).arg(seedSpin_->value());
    curvePanel_->setTitle(runTitle_);
    history_.clear();
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
    setRunning(true);
    showMessage(tr("Starting %1…").arg(presetCombo_->currentText()));
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
            : tr("Running — step %L1 / %L2").arg(lastStep_).arg(totalSteps_);
    if (!methodNotes_.isEmpty())
        text += QStringLiteral(" · ") + methodNotes_.join(QStringLiteral(" · "));
    return text;
}

void MainWindow::onPoints(const QVector<SessionPoint>& points) {
    history_ += points;
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
    // Accuracies, ranks and fractions read better on a linear axis; losses and κ on a log one.
    static const QStringList kLinear = {QStringLiteral("test_accuracy"), QStringLiteral("eff_rank"),
                                        QStringLiteral("solve_fraction"), QStringLiteral("time_s")};
    curvePanel_->clear();
    curvePanel_->setMetric(metric);
    curvePanel_->setLogY(!kLinear.contains(metric));
    curvePanel_->setTitle(runTitle_);
    appendToPanel(history_);
    for (auto it = seriesNotes_.cbegin(); it != seriesNotes_.cend(); ++it)
        curvePanel_->setSeriesNote(it.key(), it.value());
    curvePanel_->rescale();
}

void MainWindow::appendToPanel(const QVector<SessionPoint>& points) {
    // Group per method (in arrival order) so each curve gets one append per drain.
    QVector<QString> order;
    QHash<QString, QPair<QVector<double>, QVector<double>>> byMethod;
    for (const auto& p : points) {
        if (p.metric != shownMetric_) continue;
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
    showMessage(text, /*error=*/status == QLatin1String("diverged"));
    Q_EMIT runEnded(status != QLatin1String("diverged"));
}

void MainWindow::onFailed(const QString& message) {
    setRunning(false);
    progressBar_->setValue(0);
    showMessage(tr("Run failed: %1").arg(message), /*error=*/true);
    Q_EMIT runEnded(false);
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings settings(QStringLiteral("LiftLab"), QStringLiteral("LiftLab"));
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/splitter"), splitter_->saveState());
    // Closing mid-run stops the run; the session joins its thread when it is destroyed.
    session_->stop();
    QMainWindow::closeEvent(event);
}

}  // namespace liftlab
