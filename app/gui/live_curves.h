// The curve panel of the lab window and what it shows: the running experiment's points (every
// point is kept, so the shown metric can change mid-run) or run folders (one, or two compared),
// redrawn for the shown metric. GUI thread only.
#pragma once
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <map>
#include <memory>
#include <optional>

#include "loss_curve_panel.h"
#include "session_values.h"

namespace liftlab {

struct RunFolderData;

class LiveCurves {
public:
    LiveCurves(LossCurvePanel* panel, const QString& metric);

    const QString& metric() const { return metric_; }
    // The metric to show from the next redraw() on.
    void setMetric(const QString& metric) { metric_ = metric; }
    const QString& title() const { return title_; }

    // A new run: clears the panel and the history; the legend lists `legend` in that order.
    // Live curves follow `firstSeed` (the spec's first seed) when several seeds run. `losses`:
    // the loss each method trains on in a classification run (label → loss, for the y label).
    void beginLive(const QString& title, std::optional<quint64> firstSeed,
                   const QStringList& legend,
                   const std::map<std::string, std::string>& losses = {});
    void addLive(const QVector<SessionPoint>& points);
    // A note beside a method's curve ("diverged at step 12"), kept across redraws.
    void noteSeries(const QString& method, const QString& note);
    // A run folder instead of the live history — one run, or a comparison merged into one
    // (labels with run tags, "adam (B)": same colour, the run's line style) — with a caption
    // under the plot (a comparison's key naming each run). Shown at the next redraw().
    void showRuns(std::shared_ptr<const RunFolderData> run, const QString& title,
                  const QString& caption = QString());
    // The finished live run's folder replaces its history (mean ± sd over its seeds).
    void showFinishedRun(std::shared_ptr<const RunFolderData> run);
    void redraw();
    // The events of run folder `runDir` (events.csv: one marker per step, method and key, over
    // its seeds) drawn on the curves from now on, kept across redraws; none without the file.
    // beginLive() forgets them. Returns how many there are.
    int loadEvents(const QString& runDir);
    // A forked run (spec.json "parent", "fork_step"): its parent's curves up to the fork step
    // drawn with it ("adam (parent)": the method's colour, dashed; the mean over seeds) when
    // `drawCurves`, and a solid marker "fork @S" at the fork step, from now on and across
    // redraws; a null `parent` with drawCurves false: the marker alone (a comparison of the
    // two, aligned by step). beginLive() and showRuns() forget it.
    void setForkParent(std::shared_ptr<const RunFolderData> parent, int forkStep, bool drawCurves);
    static QString parentLabel(const QString& method);  // "adam" → "adam (parent)"
    // Events as the live run applies them (the same markers as loadEvents gives from its
    // events.csv, one per step, method and key over the seeds).
    void addEvents(const QVector<SessionEvent>& events);

private:
    void append(const QVector<SessionPoint>& points);
    // The panel's metric and its y label (which loss each method's value is, when they differ).
    void applyMetric();
    // The parent's curves (setForkParent) for the shown metric, and the markers with the fork's.
    void drawForkParent();
    QVector<LossCurvePanel::EventMarker> markers() const;

    LossCurvePanel* panel_;
    QString metric_;
    QString title_;
    QVector<SessionPoint> history_;  // every point of the live run, for re-plotting
    QHash<QString, QString> notes_;  // method → "diverged at step 12"
    std::optional<quint64> firstSeed_;
    QHash<QString, quint64> liveSeed_;  // method → the seed its live curve follows
    std::shared_ptr<const RunFolderData> opened_;
    QString caption_;
    QVector<LossCurvePanel::EventMarker> events_;      // drawn after every redraw
    std::map<std::string, std::string> liveLosses_;    // the live run's label → training loss
    std::shared_ptr<const RunFolderData> forkParent_;  // drawn up to forkStep_
    int forkStep_ = -1;                                // -1: not a fork
};

}  // namespace liftlab
