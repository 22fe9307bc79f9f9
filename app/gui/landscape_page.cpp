#include "landscape_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>
#include <initializer_list>

#include "control_row.h"
#include "core/bounded_input.h"
#include "landscape_panel.h"
#include "run/run_folder_schema.h"
#include "training/icnn_landscape.h"

namespace liftlab {

LandscapePage::LandscapePage(QWidget* parent)
    : QWidget(parent), worker_(new LandscapeWorker(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    method_ = new QComboBox(this);
    method_->setObjectName(QStringLiteral("landscapeMethod"));
    method_->setToolTip(tr("The plane goes through this method's final checkpoint"));
    seed_ = new QComboBox(this);
    seed_->setObjectName(QStringLiteral("landscapeSeed"));
    directions_ = new QComboBox(this);
    directions_->setObjectName(QStringLiteral("landscapeDirections"));
    directions_->addItems(
        {QStringLiteral("pca"), QStringLiteral("delta-pca"), QStringLiteral("random")});
    directions_->setToolTip(
        tr("pca: top-2 PCA of the trajectory · delta-pca: first→last and "
           "the PCA direction orthogonal to it · random: seeded, "
           "filter-normalised"));
    gridTheta_ = new QSpinBox(this);
    gridTheta_->setObjectName(QStringLiteral("landscapeGridTheta"));
    gridTheta_->setRange(3, 201);
    gridTheta_->setValue(41);
    gridTheta_->setPrefix(tr("θ grid "));
    gridLifted_ = new QSpinBox(this);
    gridLifted_->setObjectName(QStringLiteral("landscapeGridLifted"));
    gridLifted_->setRange(3, 201);
    gridLifted_->setValue(25);
    gridLifted_->setPrefix(tr("lifted grid "));
    compute_ = new QPushButton(tr("Compute"), this);
    compute_->setObjectName(QStringLiteral("landscapeCompute"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setObjectName(QStringLiteral("landscapeCancel"));
    progress_ = new QProgressBar(this);
    progress_->setObjectName(QStringLiteral("landscapeProgress"));
    progress_->setRange(0, 1000);
    progress_->setMaximumWidth(160);
    connect(compute_, &QPushButton::clicked, this, [this] { compute(); });
    connect(cancel_, &QPushButton::clicked, this, &LandscapePage::cancel);
    layout->addWidget(controlRow(
        this, {new QLabel(tr("Centre"), this), method_, seed_, new QLabel(tr("Plane"), this),
               directions_, gridTheta_, gridLifted_, compute_, cancel_, progress_}));
    panel_ = new LandscapePanel(this);
    layout->addWidget(panel_, 1);
    timeline_ = new QSlider(Qt::Horizontal, this);
    timeline_->setObjectName(QStringLiteral("landscapeTimeline"));
    timeline_->setEnabled(false);
    timeline_->setToolTip(tr("Moves the marker along every trajectory"));
    status_ = new QLabel(tr("Open or finish an ICNN run with checkpoints (preset "
                            "icnn-landscape) to compute its landscapes."),
                         this);
    status_->setWordWrap(true);
    connect(timeline_, &QSlider::valueChanged, this, [this](int i) {
        if (i >= 0 && i < steps_.size()) panel_->setTimelineStep(steps_[i]);
    });
    auto* bottom = new QWidget(this);
    auto* bl = new QHBoxLayout(bottom);
    bl->setContentsMargins(6, 2, 6, 4);
    bl->addWidget(new QLabel(tr("Checkpoint"), bottom));
    bl->addWidget(timeline_, 1);
    bl->addWidget(status_, 2);
    layout->addWidget(bottom);
    setBusy(false);
    compute_->setEnabled(false);

    connect(worker_, &LandscapeWorker::progress, this, [this](double f) {
        progress_->setValue(static_cast<int>(f * 1000 + 0.5));
        Q_EMIT progress(f);
    });
    connect(worker_, &LandscapeWorker::finished, this, &LandscapePage::onFinished);
    connect(worker_, &LandscapeWorker::failed, this, [this](const QString& message) {
        setBusy(false);
        status_->setText(tr("Landscape failed: %1").arg(message));
        Q_EMIT done(status_->text(), false);
    });
    connect(worker_, &LandscapeWorker::cancelled, this, [this] {
        setBusy(false);
        status_->setText(tr("Landscape cancelled; nothing was cached."));
        Q_EMIT done(status_->text(), false);
    });
}

LandscapePage::~LandscapePage() = default;

void LandscapePage::setRun(const QString& runDir, const QStringList& methods,
                           const QList<quint64>& seeds) {
    run_ = runDir;
    const QString shown = method_->currentText();
    method_->clear();
    method_->addItems(methods);
    if (method_->findText(shown) >= 0) method_->setCurrentText(shown);
    seed_->clear();
    for (quint64 s : seeds) seed_->addItem(tr("seed %1").arg(s), QVariant::fromValue(s));
    const bool ok = !runDir.isEmpty() && !methods.isEmpty();
    compute_->setEnabled(ok && !worker_->isRunning());
    const QString off =
        runDir.isEmpty() && runDirHint_.isEmpty()
            ? tr("Compute is off: no run is open. Open or finish an ICNN run with checkpoints "
                 "(preset icnn-landscape).")
            : tr("Compute is off: this run has no checkpoint trajectories (ICNN runs with "
                 "diagnostics.checkpoint_every, e.g. preset icnn-landscape).");
    if (!worker_->isRunning())
        status_->setText(ok ? tr("Press Compute (cached landscapes open at once).") : off);
    compute_->setToolTip(ok ? tr("Compute the loss landscapes of the chosen method in the "
                                 "background (progress and Cancel below)")
                            : off);
}

void LandscapePage::setRunFolder(const QString& dir) {
    runDirHint_ = dir;
    QList<quint64> seeds;
    QStringList labels;
    nlohmann::json spec;
    try {
        spec = read_json_file(dir.toStdString() + "/" + run_folder::kSpec);
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
    setRun(labels.isEmpty() ? QString() : dir, labels, seeds);
}

bool LandscapePage::compute() {
    if (run_.isEmpty() || worker_->isRunning()) return false;
    LandscapeRequest r;
    r.runDir = run_;
    r.method = method_->currentText();
    r.seed = seed_->count() ? static_cast<qint64>(seed_->currentData().toULongLong()) : -1;
    r.directions = directions_->currentText();
    r.gridTheta = gridTheta_->value();
    r.gridLifted = gridLifted_->value();
    if (!worker_->start(r)) return false;
    setBusy(true);
    status_->setText(live_ ? tr("Computing the landscapes of %1 at its latest checkpoint, "
                                "beside the training…")
                                 .arg(r.method)
                           : tr("Computing the landscapes of %1…").arg(r.method));
    return true;
}

bool LandscapePage::computeLive(const QString& runDir, QString* whyNot) {
    if (worker_->isRunning()) {
        *whyNot = tr("a landscape is being computed: wait for it or cancel it");
        return false;
    }
    if (runDir.isEmpty()) {
        *whyNot = tr("the run writes no folder yet");
        return false;
    }
    setRunFolder(runDir);
    if (run_.isEmpty()) {
        *whyNot =
            tr("the run has written no checkpoint trajectory yet (diagnostics."
               "checkpoint_every; the first is written at its first log point)");
        return false;
    }
    live_ = true;
    if (!compute()) {
        live_ = false;
        *whyNot = tr("the landscape could not start");
        return false;
    }
    return true;
}

void LandscapePage::cancel() {
    if (worker_->isRunning()) worker_->cancel();
}

QString LandscapePage::status() const {
    return status_->text();
}

void LandscapePage::setBusy(bool busy) {
    compute_->setEnabled(!busy && !run_.isEmpty());
    cancel_->setEnabled(busy);
    progress_->setValue(busy ? 0 : progress_->value());
    method_->setEnabled(!busy);
    directions_->setEnabled(!busy);
    if (!busy) live_ = false;
}

void LandscapePage::onFinished(const QVector<LandscapeSideResult>& sides) {
    const bool live = live_;
    setBusy(false);
    progress_->setValue(1000);
    panel_->clear();
    QStringList parts;
    QString kind;
    steps_.clear();
    for (const auto& s : sides) {
        const auto side = s.theta ? LandscapePanel::Theta : LandscapePanel::Lifted;
        panel_->setSideVisible(side, true);
        panel_->setGrid(side, s.nAlpha, s.nBeta, s.alphaMin, s.alphaMax, s.betaMin, s.betaMax,
                        s.loss);
        panel_->setSideTitle(
            side, s.theta
                      ? tr("θ-space, %1 parameters").arg(s.parameters)
                      : tr("lifted space of %1, %2 parameters").arg(s.method).arg(s.parameters));
        for (auto it = s.alpha.cbegin(); it != s.alpha.cend(); ++it) {
            panel_->addTrajectory(side, it.key(), s.steps[it.key()], it.value(), s.beta[it.key()]);
            for (double st : s.steps[it.key()])
                if (!steps_.contains(st)) steps_.push_back(st);
        }
        kind = s.kind;
        parts << tr("%1 %2 (%3)")
                     .arg(s.theta ? tr("θ") : tr("lifted"))
                     .arg(s.fromCache ? tr("from the cache")
                                      : tr("computed in %1 s").arg(s.seconds, 0, 'f', 1))
                     .arg(tr("centre loss %1").arg(s.centerLoss, 0, 'g', 5));
    }
    std::sort(steps_.begin(), steps_.end());
    const QString axis1 = kind == QLatin1String("random")      ? tr("random direction 1")
                          : kind == QLatin1String("delta-pca") ? tr("δ: first → last")
                                                               : tr("trajectory PCA 1");
    const QString axis2 = kind == QLatin1String("random")      ? tr("random direction 2")
                          : kind == QLatin1String("delta-pca") ? tr("PCA ⟂ δ")
                                                               : tr("trajectory PCA 2");
    panel_->setAxisLabels(axis1, axis2);
    if (!sides.isEmpty()) {
        const QString at = live && !steps_.isEmpty()
                               ? tr("checkpoint at step %L1 (the run goes on)")
                                     .arg(static_cast<qint64>(steps_.back()))
                               : tr("final %1").arg(sides.front().method);
        panel_->setTitle(tr("test NLL around the %1, %2 plane").arg(at, kind));
    }
    timeline_->setEnabled(!steps_.isEmpty());
    timeline_->setRange(0, std::max<int>(0, steps_.size() - 1));
    timeline_->setValue(timeline_->maximum());
    hasLandscape_ = !sides.isEmpty();
    status_->setText(parts.join(QStringLiteral(" · ")));
    Q_EMIT done(status_->text(), true);
}

void LandscapePage::saveSettings(QSettings& settings) const {
    settings.setValue(QStringLiteral("panels/landscapeDirections"), directions_->currentText());
    settings.setValue(QStringLiteral("panels/landscapeGridTheta"), gridTheta_->value());
    settings.setValue(QStringLiteral("panels/landscapeGridLifted"), gridLifted_->value());
}

void LandscapePage::restoreSettings(const QSettings& settings) {
    const QString dirs = settings.value(QStringLiteral("panels/landscapeDirections")).toString();
    if (directions_->findText(dirs) >= 0) directions_->setCurrentText(dirs);
    gridTheta_->setValue(settings.value(QStringLiteral("panels/landscapeGridTheta"), 41).toInt());
    gridLifted_->setValue(settings.value(QStringLiteral("panels/landscapeGridLifted"), 25).toInt());
}

}  // namespace liftlab
