#include "run_view.h"

#include <qcustomplot.h>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QTextStream>
#include <QVBoxLayout>
#include <cmath>
#include <iterator>

#include "ablation_panel.h"
#include "control_row.h"
#include "escape_panel.h"
#include "figure_catalogue.h"
#include "fork_point_slider.h"
#include "histogram_panel.h"
#include "landscape_page.h"
#include "landscape_panel.h"
#include "loss_curve_panel.h"
#include "methods/method_registry.h"
#include "panel_feed.h"
#include "run/run_files.h"
#include "run_folder_data.h"
#include "scatter_panel.h"
#include "spec/experiment_spec.h"
#include "spectrum_panel.h"
#include "spectrum_timeline.h"
#include "sweep_panel.h"
#include "training/icnn_landscape.h"

namespace liftlab {

QVector<RunView::TabInfo> RunView::tabInfos() {
    QVector<TabInfo> out = {
        {QStringLiteral("curves"), tr("Curves"),
         tr("Any logged metric over steps, every method, mean ± sd over seeds; compared runs by "
            "line style")},
        {QStringLiteral("spectrum"), tr("Spectrum"),
         tr("Singular values of the features over training; one-step gain against κ "
            "(closed-form runs)")},
        {QStringLiteral("landscape"), tr("Landscape"),
         tr("Loss around the final iterate in θ-space and in the lifted space, with the "
            "trajectories (ICNN runs with checkpoints; press Compute)")},
        {QStringLiteral("escape"), tr("Escape dynamics"),
         tr("θ̃ traces, shoulder occupancy, exits and dwell times (ICNN runs)")},
        {QStringLiteral("ablation"), tr("Ablation"),
         tr("σ²_Jac per strategy with permutation p-values; final losses over seeds (ICNN "
            "runs)")},
        {QStringLiteral("sweep"), tr("Sweep"),
         tr("A sweep's final metric against the swept value (batch size, λ, width), one line "
            "per method, ± sd over seeds")},
    };
    for (const FigureEntry& entry : figure_catalogue())
        out.push_back({entry.key, entry.title, entry.tip});
    return out;
}

RunView::RunView(QWidget* parent) : QTabWidget(parent) {
    setDocumentMode(true);
    // The pages first (each sets its panel member), then the panels, one line each, in the order
    // of the Tab enum: page, file key of its export, title, tooltip, main plot panel, whether it
    // has something to show.
    QWidget* const pages[] = {buildCurvesTab(), buildSpectrumTab(), buildLandscapeTab(),
                              buildEscapeTab(), buildAblationTab(), buildSweepTab()};
    const QVector<TabInfo> infos = tabInfos();
    PlotPanel* const panels[] = {
        curves_, spectrum_->spectrumPanel(), landscape_, escape_, ablation_, sweep_};
    const std::function<bool()> content[] = {[this] { return curves_->seriesCount() > 0; },
                                             [this] { return hasSpectrum_; },
                                             [this] { return landscapeTab_->hasLandscape(); },
                                             [this] { return hasEscape_; },
                                             [this] { return hasAblation_; },
                                             [this] { return hasSweep_; }};
    for (int i = 0; i < TabCount; ++i)
        addPanelTab(pages[i], infos[i].key, infos[i].title, infos[i].tip, panels[i], content[i]);
    // Then the registered figures (app/feed/figure_catalogue.cpp), a tab each.
    for (const FigureEntry& entry : figure_catalogue()) {
        PlotPanel* panel = entry.make(this);
        const int index = static_cast<int>(figures_.size());
        figures_.push_back({panel, &entry, false});
        addPanelTab(panel, entry.key, entry.title, entry.tip, panel,
                    [this, index] { return figures_[index].hasContent; });
    }

    setEmptyReasons(RunExpectations());
}

RunView::~RunView() = default;

QWidget* RunView::buildCurvesTab() {
    auto* tab = new QWidget(this);
    auto* layout = new QVBoxLayout(tab);
    layout->setContentsMargins(0, 0, 0, 0);
    curves_ = new LossCurvePanel(tab);
    auto* smoothingLabel = new QLabel(tr("Smoothing"), tab);
    auto* smoothing = new QSlider(Qt::Horizontal, tab);
    smoothing->setObjectName(QStringLiteral("smoothing"));
    smoothing->setRange(0, 99);
    smoothing->setMaximumWidth(160);
    smoothing->setToolTip(tr("Exponential moving average (debiased); the raw curve stays visible"));
    auto* smoothingValue = new QLabel(QStringLiteral("0.00"), tab);
    connect(smoothing, &QSlider::valueChanged, this, [this, smoothingValue](int v) {
        smoothingValue->setText(QString::number(v / 100.0, 'f', 2));
        curves_->setSmoothing(v / 100.0);
    });
    auto* logBox = new QCheckBox(tr("log y"), tab);
    logBox->setObjectName(QStringLiteral("logY"));
    logBox->setChecked(true);
    connect(logBox, &QCheckBox::toggled, this, [this](bool on) {
        if (curves_->logY() != on) curves_->setLogY(on);
        curves_->rescale();
    });
    // A metric read on a linear axis (accuracy, effective rank) or the plot's menu switches the
    // axis: the box follows.
    connect(curves_, &LossCurvePanel::logYChanged, logBox, [logBox](bool on) {
        const QSignalBlocker block(logBox);
        logBox->setChecked(on);
    });
    auto* hint = new QLabel(tr("drag: zoom · wheel: zoom · double-click: show all"), tab);
    hint->setStyleSheet(QStringLiteral("color: gray;"));
    layout->addWidget(controlRow(tab, {smoothingLabel, smoothing, smoothingValue, logBox, hint}));
    layout->addWidget(curves_, 1);
    // The checkpoint slider: moving it pins the curves' crosshair on the kept step.
    forkPoints_ = new ForkPointSlider(tab);
    layout->addWidget(forkPoints_);
    connect(forkPoints_, &ForkPointSlider::stepChosen, this, [this](int step) {
        if (step < 0) return;
        curves_->showCrosshairAt(step);
        forkCrosshair_ = true;
    });
    return tab;
}

void RunView::setForkPoints(const QVector<int>& steps) {
    if (steps == forkPoints_->steps()) return;
    if (forkCrosshair_) curves_->hideCrosshair();
    forkCrosshair_ = false;
    forkPoints_->setSteps(steps);
}

QWidget* RunView::buildSpectrumTab() {
    auto* split = new QSplitter(Qt::Horizontal, this);
    spectrum_ = new SpectrumTimeline(split);
    gain_ = new ScatterPanel(split);
    gain_->setTitle(tr("One-step gain of the closed form"));
    gain_->setEmptyNote(tr("no one-step gain logged (diagnostics.one_step_every)"));
    split->addWidget(spectrum_);
    split->addWidget(gain_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    return split;
}

QWidget* RunView::buildLandscapeTab() {
    landscapeTab_ = new LandscapePage(this);
    landscape_ = landscapeTab_->panel();
    connect(landscapeTab_, &LandscapePage::progress, this, &RunView::landscapeProgress);
    connect(landscapeTab_, &LandscapePage::done, this, &RunView::landscapeDone);
    return landscapeTab_;
}

QWidget* RunView::buildEscapeTab() {
    auto* tab = new QWidget(this);
    auto* layout = new QVBoxLayout(tab);
    layout->setContentsMargins(0, 0, 0, 0);
    escapeTraces_ = new QComboBox(tab);
    escapeTraces_->setObjectName(QStringLiteral("escapeTraces"));
    escapeTraces_->setToolTip(
        tr("Whose θ̃ traces the top panel draws: one method's coordinates read, all methods' "
           "overlap"));
    escapeTraces_->addItem(tr("every method"), QString());
    connect(escapeTraces_, qOverload<int>(&QComboBox::currentIndexChanged), this,
            [this](int index) {
                if (index >= 0) escape_->showTracesOf(escapeTraces_->itemData(index).toString());
            });
    layout->addWidget(controlRow(tab, {new QLabel(tr("θ̃ traces of"), tab), escapeTraces_}));
    escape_ = new EscapePanel(tab);
    escape_->setCaption(
        tr("Top: θ̃ of a few constrained weights per method; the shaded band is the readout "
           "shoulder σ(θ̃) < 0.05, where every update is damped at least 20×. Bottom left: "
           "occupancy, the share of constrained weights in the shoulder (0 to 1). How to read "
           "it: high occupancy with many exits = weights cycling in and out (the lifter's "
           "escape); high occupancy with few exits = absorbed, stuck; low occupancy = few "
           "weights in the shoulder at all. Exit rate = exits per coordinate-step spent in the "
           "shoulder; dwell = steps a weight stays in before it exits."));
    layout->addWidget(escape_, 1);
    return tab;
}

void RunView::updateEscapeTraceChoice() {
    const QStringList methods = escape_->traceMethods();
    QStringList listed;
    for (int i = 1; i < escapeTraces_->count(); ++i)
        listed << escapeTraces_->itemData(i).toString();
    if (methods == listed) return;
    const QSignalBlocker block(escapeTraces_);
    QString shown = escape_->tracesShown();
    escapeTraces_->clear();
    escapeTraces_->addItem(tr("every method"), QString());
    for (const QString& m : methods) escapeTraces_->addItem(m, m);
    // One method's traces by default: several methods' coordinates tangle.
    if (shown.isEmpty() || !methods.contains(shown)) shown = methods.value(0);
    escapeTraces_->setCurrentIndex(std::max(0, escapeTraces_->findData(shown)));
    escape_->showTracesOf(shown);
}

QWidget* RunView::buildAblationTab() {
    auto* split = new QSplitter(Qt::Horizontal, this);
    auto* left = new QWidget(split);
    auto* ll = new QVBoxLayout(left);
    ll->setContentsMargins(0, 0, 0, 0);
    thetaBox_ = new QCheckBox(tr("un-contracted θ̃-gradient at a fixed iterate"), left);
    thetaBox_->setToolTip(
        tr("Off: σ²_Jac with g_b = ∂ℓ_b/∂b, the slack gradient at each probe batch's own "
           "emitted θ̃_b (docs/methods.md §4.1; a structural 0 without a slack). On: the separate "
           "diagnostic with g_b = ∂ℓ_b/∂θ̃ at one fixed iterate, defined for every strategy"));
    ablation_ = new AblationPanel(left);
    ablation_->setValueLabel(QStringLiteral("σ²_Jac = tr Cov(θ̃_b, g_b)"));
    ablation_->setCaption(
        tr("σ²_Jac is the trace of a covariance over probe batches, so it has a sign: a negative "
           "bar means the emitted weights and the slack gradients vary in opposite directions, "
           "not a failure. Read its size against the permutation null (error bar, p): the full "
           "lifter reads clearly non-zero; a strategy without a slack is a structural 0."));
    ll->addWidget(controlRow(left, {thetaBox_}));
    ll->addWidget(ablation_, 1);
    basins_ = new HistogramPanel(split);
    basins_->setValueLabel(tr("final test NLL (nats per sample)"));
    basins_->setTitle(tr("Final loss over seeds"));
    split->addWidget(left);
    split->addWidget(basins_);
    return split;
}

QWidget* RunView::buildSweepTab() {
    auto* tab = new QWidget(this);
    auto* layout = new QVBoxLayout(tab);
    layout->setContentsMargins(0, 0, 0, 0);
    sweepMetric_ = new QComboBox(tab);
    sweepMetric_->setObjectName(QStringLiteral("sweepMetric"));
    sweepMetric_->setToolTip(tr("The final metric drawn against the swept value"));
    connect(sweepMetric_, &QComboBox::currentTextChanged, this, [this](const QString& metric) {
        if (!metric.isEmpty()) showSweep(metric);
    });
    layout->addWidget(controlRow(tab, {new QLabel(tr("Final"), tab), sweepMetric_}));
    sweep_ = new SweepPanel(tab);
    sweep_->setTitle(
        tr("Sweep: open or finish a run with a \"sweep\" block "
           "(cf-batch-sweep, cf-fno-batch-sweep, cf-lambda-sweep, …)"));
    layout->addWidget(sweep_, 1);
    return tab;
}

void RunView::setEmptyReasons(const RunExpectations& e) {
    const QString cfRun = tr("this is a closed-form run");
    reasons_.clear();
    reasons_[CurvesTab] =
        e.known ? tr("Waiting for the first log point …")
                : tr("Press Start (toolbar) to run the form's experiment, or double-click a run in "
                     "the history below to open it.");
    curves_->setEmptyNote(reasons_[CurvesTab]);

    reasons_[SpectrumTab] =
        !e.known ? tr("Open or run a closed-form experiment with diagnostics.spectrum_every "
                      "(cf-regression has it) to see its feature spectra.")
        : e.icnn ? tr("Feature spectra are recorded for backbone + last-layer runs; this is an "
                      "ICNN run, which has none.")
        : e.spectrumEvery <= 0
            ? tr("This run recorded no spectra: set diagnostics.spectrum_every (All settings) "
                 "and run again.")
            : tr("Waiting for the first spectrum (every %1 steps) …").arg(e.spectrumEvery);
    spectrum_->spectrumPanel()->setEmptyNote(reasons_[SpectrumTab]);
    gain_->setEmptyNote(e.icnn ? tr("No one-step gain: a closed-form diagnostic.")
                               : tr("No one-step gain logged: set diagnostics.one_step_every "
                                    "(All settings)."));

    reasons_[LandscapeTab] =
        !e.known  ? tr("Open or finish an ICNN run with checkpoints (preset icnn-landscape),\n"
                        "then press Compute.")
        : !e.icnn ? tr("Landscapes are drawn for ICNN runs with checkpoints\n"
                       "(preset icnn-landscape); %1.")
                        .arg(cfRun)
        : e.checkpointEvery <= 0
            ? tr("This run saved no checkpoints, so it has no landscape:\n"
                 "set diagnostics.checkpoint_every (All settings) and run again\n"
                 "(icnn-landscape has it); then press Compute.")
        : e.live ? tr("Press Compute once the run has ended.")
                 : tr("No landscape yet: press Compute above (it runs in the\n"
                      "background; cached landscapes open at once).");
    landscape_->setEmptyReason(reasons_[LandscapeTab]);

    reasons_[EscapeTab] = !e.known
                              ? tr("Open or run an ICNN experiment (icnn-escape, icnn-ebm-1d)\n"
                                   "to see its escape dynamics.")
                          : !e.icnn ? tr("Escape dynamics are recorded for ICNN runs: %1.\n"
                                         "Open or run an ICNN preset (icnn-escape, icnn-ebm-1d).")
                                          .arg(cfRun)
                          : e.shoulderEvery <= 0
                              ? tr("This ICNN run observed no shoulder: set\n"
                                   "diagnostics.shoulder_every (All settings) and run again\n"
                                   "(icnn-escape has it).")
                              : tr("Waiting for the first shoulder observation\n(every %1 steps) …")
                                    .arg(e.shoulderEvery);
    escape_->setEmptyReason(reasons_[EscapeTab]);

    reasons_[AblationTab] =
        !e.known  ? tr("Open or run preset icnn-ablation to compare σ²_Jac\n"
                        "of the lifter and its ablations.")
        : !e.icnn ? tr("σ²_Jac is a diagnostic of the ICNN positivity strategies;\n"
                       "%1. Preset icnn-ablation computes it.")
                        .arg(cfRun)
        : e.jacobianBatches <= 0 ? tr("This run computed no σ²_Jac: set\n"
                                      "diagnostics.jacobian_batches (e.g. 256, All settings)\n"
                                      "and run again (icnn-ablation has it).")
                                 : tr("σ²_Jac is computed once, at the end of the run.");
    ablation_->setEmptyReason(reasons_[AblationTab]);
    basins_->setEmptyReason(e.seeds < 2 ? tr("The final loss over seeds\nneeds 2 or more seeds\n"
                                             "(Seeds: 0-4).")
                                        : tr("Waiting for the runs to end …"));

    reasons_[SweepTab] = e.sweep ? tr("Waiting for the sweep's runs to end …")
                                 : tr("This run has no sweep block: open or run a sweep preset "
                                      "(cf-batch-sweep, cf-lambda-sweep, …) to draw a final "
                                      "metric against the swept value.");
    sweep_->setEmptyNote(reasons_[SweepTab]);
    for (int i = 0; i < static_cast<int>(figures_.size()); ++i) {
        const QString reason =
            e.known ? tr("Nothing recorded for this figure: the run logged no time_s yet.")
                    : tr("Open or run an experiment to see its cost per step.");
        reasons_[TabCount + i] = reason;
        if (!figures_[i].hasContent) figures_[i].panel->setEmptyNote(reason);
    }
}

QString RunView::emptyReason(int index) const {
    if (index < 0 || index >= tabCount() || hasContent(index)) return QString();
    return reasons_.value(index);
}

void RunView::setComparison(const QStringList& runDirs) {
    comparedRuns_ = runDirs;
    if (runDirs.size() < 2) return;
    const QString reason = tr("Landscapes are computed one run at a time: this tab uses run A\n"
                              "(%1). Open another run alone to compute its landscape.")
                               .arg(QFileInfo(runDirs.front()).fileName());
    reasons_[LandscapeTab] = reason;
    landscape_->setEmptyReason(reason);
}

RunView::RunExpectations RunView::expectationsOf(const ExperimentSpec& spec, bool live) {
    RunExpectations e;
    e.known = true;
    e.live = live;
    const auto* kind = find_task_kind(spec.task.kind);
    e.icnn = kind && kind->family == TaskFamily::Icnn;
    e.spectrumEvery = spec.diagnostics.spectrum_every;
    e.shoulderEvery = spec.diagnostics.shoulder_every;
    e.jacobianBatches = spec.diagnostics.jacobian_batches;
    e.checkpointEvery = spec.diagnostics.checkpoint_every;
    e.sweep = !spec.sweep.key.empty();
    e.seeds = static_cast<int>(spec.seeds.size());
    return e;
}

void RunView::showSweep(const QString& metric) {
    sweep_->clear();
    if (!sweepRun_) return;
    sweep_->setTitle(tr("%1 — final %2 against %3")
                         .arg(QString::fromStdString(sweepRun_->name), metric,
                              QString::fromStdString(sweepRun_->sweep_key)));
    hasSweep_ = feedSweep(*sweep_, *sweepRun_, metric.toStdString()) > 0;
}

void RunView::beginRun(const QString& title) {
    spectrum_->clear();
    gain_->clear();
    escape_->clear();
    escape_->setTitle(title + tr(" — readout-shoulder escape"));
    ablation_->clear();
    basins_->clear();
    occupancy_.clear();
    traceSeed_.clear();
    spectrumSeed_.clear();
    pushed_ = false;
    exitsSeed_.clear();
    exitsNow_.clear();
    exitsAtPush_.clear();
    hasEscape_ = hasAblation_ = hasSpectrum_ = false;
    for (auto& f : figures_) {
        f.panel->clear();
        f.hasContent = false;
    }
    updateEscapeTraceChoice();
}

void RunView::addPoints(const QVector<SessionPoint>& points) {
    QSet<QString> touched;
    for (const auto& p : points) {
        if (p.metric == QLatin1String("exits") || p.metric == QLatin1String("push_escaped")) {
            auto seed = exitsSeed_.find(p.method);  // the first seed's, as the traces
            if (seed == exitsSeed_.end()) seed = exitsSeed_.insert(p.method, p.seed);
            if (seed.value() != p.seed) continue;
            if (p.metric == QLatin1String("exits")) {
                exitsNow_[p.method] = p.value;
            } else if (pushed_) {
                const auto at = exitsAtPush_.constFind(p.method);
                const int since = at == exitsAtPush_.constEnd() || !exitsNow_.contains(p.method)
                                      ? -1
                                      : static_cast<int>(exitsNow_[p.method] - at.value());
                escape_->setPushEscaped(p.method, p.value, since);
            }
            continue;
        }
        if (p.metric != QLatin1String("shoulder_occupancy")) continue;
        auto& o = occupancy_[p.method];
        // One curve per method: a later seed's points (seeds may also arrive interleaved, when
        // they train in parallel) never step back along it.
        if (!o.first.isEmpty() && o.first.back() >= p.step) continue;
        o.first.push_back(p.step);
        o.second.push_back(p.value);
        touched.insert(p.method);
    }
    for (const QString& m : touched)
        escape_->setOccupancy(m, occupancy_[m].first, occupancy_[m].second);
    hasEscape_ = hasEscape_ || !touched.isEmpty();
}

bool RunView::showPushOf(const RunFolderData& run) {
    // The first push of events.csv (step,method,seed,key,old,new), as the live run showed it.
    QFile file(QDir(QString::fromStdString(run.dir)).filePath(QLatin1String(run_folder::kEvents)));
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return false;
    QTextStream in(&file);
    in.readLine();
    int step = -1;
    QString key;
    while (!in.atEnd() && step < 0) {
        const QStringList f = in.readLine().split(QLatin1Char(','));
        if (f.size() == 6 && f[3].startsWith(QLatin1String("push."))) {
            step = f[0].toInt();
            key = f[3].mid(5);
        }
    }
    if (step < 0) return false;
    escape_->setPush(step, tr("push (%1) after step %L2").arg(key).arg(step));
    // Per method: the pushed coordinates' escape at the end and the exits since the push (mean
    // over the seeds).
    const auto mean = [](const std::vector<double>& v) {
        double sum = 0;
        for (double x : v) sum += x;
        return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
    };
    const auto exits = run.metrics.find("exits");
    for (const auto& [method, finals] : run.finals) {
        const auto escaped = finals.find("push_escaped");
        if (escaped == finals.end()) continue;
        int since = -1;
        if (exits != run.metrics.end()) {
            const auto m = exits->second.find(method);
            if (m != exits->second.end() && !m->second.empty()) {
                const auto at = m->second.upper_bound(step);  // the last log point ≤ step
                if (at != m->second.begin())
                    since = static_cast<int>(std::lround(mean(m->second.rbegin()->second) -
                                                         mean(std::prev(at)->second)));
            }
        }
        escape_->setPushEscaped(QString::fromStdString(method), mean(escaped->second), since);
    }
    return true;
}

void RunView::addEvents(const QVector<SessionEvent>& events) {
    for (const auto& e : events) {
        if (!e.key.startsWith(QLatin1String("push."))) continue;
        if (pushed_ && pushStep_ == e.step) continue;  // the other methods and seeds of it
        pushed_ = true;
        pushStep_ = e.step;
        exitsAtPush_ = exitsNow_;
        escape_->setPush(e.step, tr("push (%1) after step %L2").arg(e.key.mid(5)).arg(e.step));
        hasEscape_ = true;
    }
}

void RunView::addSpectra(const QVector<SessionSpectrum>& spectra) {
    for (const auto& s : spectra) {
        auto it = spectrumSeed_.find(s.method);
        if (it == spectrumSeed_.end()) it = spectrumSeed_.insert(s.method, s.seed);
        if (it.value() != s.seed) continue;  // the first seed only
        spectrum_->addSpectrum(s.method, s.step, s.singularValues);
        hasSpectrum_ = true;
    }
}

void RunView::addTraces(const QVector<SessionTrace>& traces) {
    // Only the new points go to the panel: each trace grows by appending.
    QMap<QPair<QString, int>, QPair<QVector<double>, QVector<double>>> fresh;
    for (const auto& t : traces) {
        auto it = traceSeed_.find(t.method);
        if (it == traceSeed_.end()) it = traceSeed_.insert(t.method, t.seed);
        if (it.value() != t.seed) continue;
        auto& tr = fresh[{t.method, t.coordinate}];
        tr.first.push_back(t.step);
        tr.second.push_back(t.value);
    }
    for (auto it = fresh.cbegin(); it != fresh.cend(); ++it)
        escape_->appendTrace(it.key().first, it.key().second, it.value().first, it.value().second);
    hasEscape_ = hasEscape_ || !fresh.isEmpty();
    if (!fresh.isEmpty()) updateEscapeTraceChoice();
}

void RunView::showRun(const RunFolderData& run) {
    const QString title = QString::fromStdString(run.title);
    beginRun(title);
    feedSpectra(run, [this](const QString& m, int step, const QVector<double>& sv) {
        spectrum_->addSpectrum(m, step, sv);
    });
    hasSpectrum_ = !run.spectra.empty();
    if (feedGainScatter(*gain_, run) > 0) hasSpectrum_ = true;
    hasEscape_ = feedEscape(*escape_, run);
    if (showPushOf(run)) hasEscape_ = true;
    const auto fillAblation = [this, run] {
        ablation_->clear();
        ablation_->setTitle(thetaBox_->isChecked()
                                ? tr("θ̃-gradient cross-covariance at a fixed iterate")
                                : tr("σ²_Jac (slack-contracted, each batch's emitted iterate)"));
        return feedAblation(*ablation_, run, thetaBox_->isChecked()) > 0;
    };
    hasAblation_ = fillAblation();
    thetaBox_->disconnect(this);
    connect(thetaBox_, &QCheckBox::toggled, this, [fillAblation] { fillAblation(); });
    if (feedFinalLossHistogram(*basins_, run) > 0) hasAblation_ = true;
    for (auto& f : figures_) f.hasContent = f.entry->fill(*f.panel, run);
    updateEscapeTraceChoice();

    // The sweep figure of this run (emptied for a run without a sweep).
    hasSweep_ = false;
    sweepRun_.reset();
    sweep_->clear();
    QSignalBlocker block(sweepMetric_);
    const QString shown = sweepMetric_->currentText();
    sweepMetric_->clear();
    const auto metrics = sweepMetrics(run);
    if (!metrics.empty()) {
        sweepRun_ = std::make_shared<const RunFolderData>(run);
        for (const auto& m : metrics) sweepMetric_->addItem(QString::fromStdString(m));
        if (sweepMetric_->findText(shown) >= 0) sweepMetric_->setCurrentText(shown);
        showSweep(sweepMetric_->currentText());
    }
    // What each empty tab says: from the run's own spec when it can be read.
    RunExpectations e;
    try {
        e = expectationsOf(parse_spec(read_spec_json(run.dir + "/" + run_folder::kSpec).json),
                           false);
    } catch (const std::exception&) {
        e.known = true;
        e.icnn = run.icnn();
    }
    int seeds = 0;
    for (const auto& [method, finals] : run.finals)
        for (const auto& [metric, values] : finals) seeds = std::max<int>(seeds, values.size());
    e.seeds = std::max(e.seeds, seeds);
    setEmptyReasons(e);
}

void RunView::setLandscapeRun(const QString& runDir, const QStringList& methods,
                              const QList<quint64>& seeds) {
    landscapeTab_->setRun(runDir, methods, seeds);
}

void RunView::setLandscapeRunFolder(const QString& dir) {
    landscapeTab_->setRunFolder(dir);
}

bool RunView::computeLandscape() {
    return landscapeTab_->compute();
}

void RunView::cancelLandscape() {
    landscapeTab_->cancel();
}

QString RunView::landscapeStatus() const {
    return landscapeTab_->status();
}

void RunView::saveSettings(QSettings& settings) const {
    landscapeTab_->saveSettings(settings);
    settings.setValue(QStringLiteral("panels/ablationTheta"), thetaBox_->isChecked());
    settings.setValue(QStringLiteral("panels/crosshair"), curves_->crosshairEnabled());
    settings.setValue(QStringLiteral("panels/tab"), currentIndex());
}

void RunView::restoreSettings(const QSettings& settings) {
    landscapeTab_->restoreSettings(settings);
    thetaBox_->setChecked(settings.value(QStringLiteral("panels/ablationTheta"), false).toBool());
    curves_->setCrosshairEnabled(settings.value(QStringLiteral("panels/crosshair"), true).toBool());
    const int tab = settings.value(QStringLiteral("panels/tab"), 0).toInt();
    if (tab >= 0 && tab < tabCount()) setCurrentIndex(tab);
}

void RunView::setSmoothing(double weight) {
    curves_->setSmoothing(weight);
    if (auto* s = findChild<QSlider*>(QStringLiteral("smoothing")))
        s->setValue(static_cast<int>(std::lround(weight * 100)));
}

double RunView::smoothing() const {
    return curves_->smoothing();
}

void RunView::addPanelTab(QWidget* page, const QString& key, const QString& title,
                          const QString& tip, PlotPanel* panel, std::function<bool()> hasContent) {
    const int index = addTab(page, title);
    setTabToolTip(index, tip);
    tabs_.push_back({key, panel, std::move(hasContent)});
}

int RunView::tabCount() const {
    return static_cast<int>(tabs_.size());
}

QString RunView::tabKey(int index) const {
    return index >= 0 && index < tabCount() ? tabs_[index].key : QString();
}

bool RunView::hasContent(int index) const {
    return index >= 0 && index < tabCount() && tabs_[index].hasContent();
}

bool RunView::exportTab(int index, const QString& path, int width, int height) {
    return index >= 0 && index < tabCount() && tabs_[index].panel->exportTo(path, width, height);
}

QStringList RunView::exportAll(const QString& dir, const QString& format, int width, int height) {
    QStringList written;
    QDir().mkpath(dir);
    for (int i = 0; i < tabCount(); ++i) {
        if (!hasContent(i)) continue;
        const QString path = QDir(dir).filePath(tabKey(i) + QLatin1Char('.') + format);
        if (exportTab(i, path, width, height)) written << path;
    }
    if (hasSpectrum_) {
        const QString path = QDir(dir).filePath(QStringLiteral("gain_vs_kappa.") + format);
        if (gain_->exportTo(path, width, height)) written << path;
    }
    if (basins_->seriesCount() > 0) {
        const QString path = QDir(dir).filePath(QStringLiteral("final_loss_histogram.") + format);
        if (basins_->exportTo(path, width, height)) written << path;
    }
    return written;
}

QSize RunView::exportSize() const {
    const QWidget* w = currentWidget();
    return w ? w->size().expandedTo(QSize(640, 400)) : QSize(1000, 620);
}

bool RunView::exportCurrent(const QString& path) {
    const QSize size = exportSize();
    return exportTab(currentIndex(), path, size.width(), size.height());
}

QStringList RunView::exportAllShown(const QString& dir, const QString& format) {
    const QSize size = exportSize();
    return exportAll(dir, format, size.width(), size.height());
}

bool RunView::copyCurrentPlot(double pixelRatio) {
    QCustomPlot* plot = currentPlot();
    if (!plot) return false;
    const QSize size = exportSize();
    QApplication::clipboard()->setPixmap(plot->toPixmap(size.width(), size.height(), pixelRatio));
    plot->replot(QCustomPlot::rpQueuedReplot);
    return true;
}

QCustomPlot* RunView::currentPlot() const {
    const int index = currentIndex();
    return index >= 0 && index < tabCount() ? tabs_[index].panel->plot() : nullptr;
}

}  // namespace liftlab
