#include "live_curves.h"

#include <QDir>
#include <QFileInfo>
#include <QPair>
#include <QSet>
#include <algorithm>

#include "core/c_numbers.h"
#include "loss_curve_panel.h"
#include "panel_feed.h"
#include "run/run_files.h"
#include "run_folder_data.h"

namespace liftlab {

LiveCurves::LiveCurves(LossCurvePanel* panel, const QString& metric)
    : panel_(panel), metric_(metric) {
    panel_->setMetric(metric_);
    panel_->setLogY(true);
}

void LiveCurves::beginLive(const QString& title, std::optional<quint64> firstSeed,
                           const QStringList& legend,
                           const std::map<std::string, std::string>& losses) {
    opened_.reset();
    caption_.clear();
    liveLosses_ = losses;
    panel_->clear();
    title_ = title;
    applyMetric();
    panel_->setLogY(metricPrefersLogAxis(metric_.toStdString()));
    panel_->setTitle(title_);
    panel_->setCaption(QString());
    history_.clear();
    liveSeed_.clear();
    firstSeed_ = firstSeed;
    notes_.clear();
    events_.clear();
    forkParent_.reset();
    forkStep_ = -1;
    for (const QString& label : legend) panel_->appendPoints(label, {}, {});
}

void LiveCurves::addLive(const QVector<SessionPoint>& points) {
    history_ += points;
    append(points);
}

void LiveCurves::noteSeries(const QString& method, const QString& note) {
    panel_->setSeriesNote(method, note);
    notes_[method] = note;
}

void LiveCurves::showRuns(std::shared_ptr<const RunFolderData> run, const QString& title,
                          const QString& caption) {
    opened_ = std::move(run);
    history_.clear();
    notes_.clear();
    forkParent_.reset();
    forkStep_ = -1;
    loadEvents(opened_ ? QString::fromStdString(opened_->dir) : QString());
    title_ = title;
    caption_ = caption;
}

void LiveCurves::showFinishedRun(std::shared_ptr<const RunFolderData> run) {
    opened_ = std::move(run);
    if (opened_) loadEvents(QString::fromStdString(opened_->dir));
    redraw();
}

int LiveCurves::loadEvents(const QString& runDir) {
    events_.clear();
    const QString path = QDir(runDir).filePath(QLatin1String(run_folder::kEvents));
    std::vector<EventRow> rows;
    if (!runDir.isEmpty() && QFileInfo::exists(path)) try {
            // step,method,seed,key,old,new (run/run_files.h); a malformed row is left out.
            std::vector<DataError> issues;
            rows = read_events_csv(path.toStdString(), &issues);
        } catch (const DataError&) {
            rows.clear();  // not a file LiftLab wrote: no markers
        }
    // One row per (event, seed): one marker per event.
    QSet<QString> seen;
    for (const auto& e : rows) {
        const QString method = QString::fromStdString(e.method);
        const QString key = QString::fromStdString(e.key);
        const QString id = QStringLiteral("%1,%2,%3").arg(e.step).arg(method, key);
        if (seen.contains(id)) continue;
        seen.insert(id);
        events_.push_back({static_cast<double>(e.step), method,
                           QStringLiteral("%1.%2 %3\u2192%4")
                               .arg(method, key, QString::fromStdString(c_shortest(e.old_value)),
                                    QString::fromStdString(c_shortest(e.new_value)))});
    }
    std::stable_sort(events_.begin(), events_.end(),
                     [](const auto& a, const auto& b) { return a.step < b.step; });
    panel_->setEventMarkers(markers());
    return static_cast<int>(events_.size());
}

void LiveCurves::addEvents(const QVector<SessionEvent>& events) {
    bool added = false;
    for (const auto& e : events) {
        const bool seen = std::any_of(events_.cbegin(), events_.cend(), [&](const auto& m) {
            return m.step == e.step && m.method == e.method &&
                   m.label.startsWith(e.method + QLatin1Char('.') + e.key + QLatin1Char(' '));
        });
        if (seen) continue;
        events_.push_back({static_cast<double>(e.step), e.method,
                           QStringLiteral("%1.%2 %3\u2192%4")
                               .arg(e.method, e.key, QString::fromStdString(c_shortest(e.oldValue)),
                                    QString::fromStdString(c_shortest(e.newValue)))});
        added = true;
    }
    if (!added) return;
    std::stable_sort(events_.begin(), events_.end(),
                     [](const auto& a, const auto& b) { return a.step < b.step; });
    panel_->setEventMarkers(events_);
}

void LiveCurves::redraw() {
    liveSeed_.clear();
    const std::string metric = metric_.toStdString();
    panel_->clear();
    applyMetric();
    panel_->setLogY(metricPrefersLogAxis(metric));
    panel_->setTitle(title_);
    panel_->setCaption(caption_);
    if (opened_) {
        feedCurves(*panel_, *opened_, metric);
    } else {
        append(history_);
        for (auto it = notes_.cbegin(); it != notes_.cend(); ++it)
            panel_->setSeriesNote(it.key(), it.value());
    }
    drawForkParent();
    panel_->rescale();
}

void LiveCurves::applyMetric() {
    panel_->setMetric(metric_);
    const auto& losses = opened_ ? opened_->training_loss : liveLosses_;
    panel_->setAxisLabel(QString::fromStdString(curveAxisLabel(metric_.toStdString(), losses)));
}

void LiveCurves::append(const QVector<SessionPoint>& points) {
    // Group per method (in arrival order) so each curve gets one append per drain.
    QVector<QString> order;
    QHash<QString, QPair<QVector<double>, QVector<double>>> byMethod;
    for (const auto& p : points) {
        if (p.metric != metric_) continue;
        // Live curves follow each method's first seed; a run with several seeds is shown as
        // mean ± sd from its run folder when it ends. Seeds may train in parallel: follow the
        // spec's first seed, not whichever reports first.
        auto seed = liveSeed_.find(p.method);
        if (seed == liveSeed_.end()) seed = liveSeed_.insert(p.method, firstSeed_.value_or(p.seed));
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
        panel_->appendPoints(method, byMethod[method].first, byMethod[method].second);
}

QString LiveCurves::parentLabel(const QString& method) {
    return method + QStringLiteral(" (parent)");
}

void LiveCurves::setForkParent(std::shared_ptr<const RunFolderData> parent, int forkStep,
                               bool drawCurves) {
    forkParent_ = drawCurves ? std::move(parent) : nullptr;
    forkStep_ = forkStep;
    drawForkParent();
    panel_->rescale();
}

QVector<LossCurvePanel::EventMarker> LiveCurves::markers() const {
    QVector<LossCurvePanel::EventMarker> out = events_;
    if (forkStep_ >= 0) {
        LossCurvePanel::EventMarker fork;
        fork.step = forkStep_;
        fork.label = QStringLiteral("fork @%1").arg(forkStep_);
        fork.colour = QColor(70, 70, 70);
        fork.solid = true;
        out.prepend(fork);
    }
    return out;
}

void LiveCurves::drawForkParent() {
    if (forkParent_) {
        const auto it = forkParent_->metrics.find(metric_.toStdString());
        if (it != forkParent_->metrics.end()) {
            for (const auto& method : forkParent_->method_order) {
                const auto m = it->second.find(method);
                if (m == it->second.end()) continue;
                QVector<double> steps, values;
                for (const auto& [step, vals] : m->second) {
                    if (step > forkStep_) break;
                    steps.push_back(step);
                    values.push_back(mean_of(vals));
                }
                if (!steps.isEmpty())
                    panel_->appendPoints(parentLabel(QString::fromStdString(method)), steps,
                                         values);
            }
        }
    }
    panel_->setEventMarkers(markers());
}

}  // namespace liftlab
