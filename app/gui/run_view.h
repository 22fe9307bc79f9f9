// The lab's panels as tabs (issue "The visual lab"): Curves, Spectrum, Landscape, Escape,
// Ablation, Sweep (final metric against the swept value, once a sweep's runs are written). Fed live
// from a TrainingSession (points, spectra, traces) and in full from a run folder (RunFolderData)
// when a run ends or is opened. The Landscape tab (LandscapePage, its own file) computes on a
// worker with progress and cancel; cached landscapes open at once.
#pragma once
#include <QHash>
#include <QMap>
#include <QPair>
#include <QString>
#include <QStringList>
#include <QTabWidget>
#include <QVector>
#include <functional>
#include <memory>

#include "session_values.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSettings;
class QSlider;
class QSpinBox;

namespace liftlab {

class AblationPanel;
class EscapePanel;
class ForkPointSlider;
class HistogramPanel;
class LandscapePanel;
class LandscapePage;
class LossCurvePanel;
class PlotPanel;
class ScatterPanel;
class SpectrumTimeline;
class SweepPanel;
struct ExperimentSpec;
struct RunFolderData;

class RunView : public QTabWidget {
    Q_OBJECT
public:
    // The built-in tabs' indices (the constructor's panel list adds them in this order).
    enum Tab {
        CurvesTab = 0,
        SpectrumTab,
        LandscapeTab,
        EscapeTab,
        AblationTab,
        SweepTab,
        TabCount  // the built-in tabs; the figure catalogue's follow (tabCount())
    };

    explicit RunView(QWidget* parent = nullptr);
    ~RunView() override;

    // Every tab in order, built-in then the figure catalogue's: key (export file name and
    // --tab), title, tooltip. Static: `liftlab --help` lists them before any window exists.
    struct TabInfo {
        QString key, title, tip;
    };
    static QVector<TabInfo> tabInfos();

    // What a run records (from its spec), so that an empty tab can say why it is empty.
    struct RunExpectations {
        bool known = false;  // false: no run shown yet
        bool live = false;   // the run is going on
        bool icnn = false;
        int spectrumEvery = 0, shoulderEvery = 0, jacobianBatches = 0, checkpointEvery = 0;
        bool sweep = false;
        int seeds = 1;
    };
    static RunExpectations expectationsOf(const ExperimentSpec& spec, bool live);
    // Every empty panel says why it is empty and what to do.
    void setEmptyReasons(const RunExpectations& expectations);
    // The reason tab `index` shows for being empty ("" when it has content).
    QString emptyReason(int index) const;
    // Comparing runs (folders, run A first; fewer than two: not comparing): the tabs that cannot
    // overlay runs say so.
    void setComparison(const QStringList& runDirs);
    QStringList comparedRuns() const { return comparedRuns_; }

    LossCurvePanel* curves() const { return curves_; }
    // The checkpoint slider under the curves (fork_point_slider.h).
    ForkPointSlider* forkPoints() const { return forkPoints_; }
    // The shown run's kept fork steps (empty: the slider hides); a crosshair the slider pinned
    // on the curves goes with the old steps.
    void setForkPoints(const QVector<int>& steps);
    SpectrumTimeline* spectrum() const { return spectrum_; }
    LandscapePanel* landscape() const { return landscape_; }
    // The Landscape tab itself (landscape_page.h): its run, worker, progress and Cancel.
    LandscapePage* landscapeTab() const { return landscapeTab_; }
    EscapePanel* escape() const { return escape_; }
    AblationPanel* ablation() const { return ablation_; }
    SweepPanel* sweep() const { return sweep_; }

    // Clears every panel but the curves (MainWindow owns their history) for a new run.
    void beginRun(const QString& title);
    // Live values of the running experiment.
    void addPoints(const QVector<liftlab::SessionPoint>& points);
    void addSpectra(const QVector<liftlab::SessionSpectrum>& spectra);
    void addTraces(const QVector<liftlab::SessionTrace>& traces);
    // Changes applied in the live run (events.csv rows): a push marks the Escape panel at its
    // step, whose key then reads, per method, the share of the pushed coordinates that have left
    // the shoulder (push_escaped) and the exits since the push.
    void addEvents(const QVector<liftlab::SessionEvent>& events);
    // Everything a run folder holds (a finished or re-opened run), except the curves.
    void showRun(const RunFolderData& run);

    // Landscape tab: the run whose landscapes are computed (an ICNN run with trajectories).
    void setLandscapeRun(const QString& runDir, const QStringList& methods,
                         const QList<quint64>& seeds);
    // The same from a run folder: its seeds and the methods with trajectories; an unreadable
    // folder or one without trajectories leaves the tab without a run.
    void setLandscapeRunFolder(const QString& runDir);
    bool computeLandscape();  // with the tab's settings; false when it cannot start
    void cancelLandscape();
    QString landscapeStatus() const;

    // Per-panel options kept between sessions (QSettings group "panels"): landscape directions
    // and grid sizes, the σ²_Jac variant, the curves' crosshair.
    void saveSettings(QSettings& settings) const;
    void restoreSettings(const QSettings& settings);

    // Curves-tab options.
    void setSmoothing(double weight);
    double smoothing() const;

    int tabCount() const;
    QString tabKey(int index) const;  // "curves", "spectrum", … (file names of exports)
    // Writes the panel of `index` (PNG/SVG/PDF by extension) at width × height pixels.
    bool exportTab(int index, const QString& path, int width, int height);
    // Every tab that has something to show, as <dir>/<key>.<format>; returns the files written.
    QStringList exportAll(const QString& dir, const QString& format, int width, int height);
    // The current tab at its size on screen (at least 640 × 400), and every tab with content at
    // that size.
    bool exportCurrent(const QString& path);
    QStringList exportAllShown(const QString& dir, const QString& format);
    // Copies the current tab's plot to the clipboard; false when it has none.
    bool copyCurrentPlot(double pixelRatio);
    // The main plot of the current tab (clipboard copies).
    QCustomPlot* currentPlot() const;
    bool hasContent(int index) const;

Q_SIGNALS:
    void landscapeProgress(double fraction);
    void landscapeDone(const QString& message, bool ok);

private:
    // Adds a page whose main plot is `panel` (exported and copied as the tab's figure).
    void addPanelTab(QWidget* page, const QString& key, const QString& title, const QString& tip,
                     PlotPanel* panel, std::function<bool()> hasContent);
    QWidget* buildCurvesTab();
    QWidget* buildSpectrumTab();
    QWidget* buildLandscapeTab();
    QWidget* buildEscapeTab();
    QWidget* buildAblationTab();
    QWidget* buildSweepTab();
    void showSweep(const QString& metric);
    // The push of a run folder (events.csv) on the Escape tab; false without one.
    bool showPushOf(const RunFolderData& run);
    void updateEscapeTraceChoice();
    QSize exportSize() const;

    struct PanelTab {
        QString key;  // file name of its export
        PlotPanel* panel = nullptr;
        std::function<bool()> hasContent;
    };
    QVector<PanelTab> tabs_;  // in tab order
    struct CatalogueFigure {
        PlotPanel* panel = nullptr;
        const struct FigureEntry* entry = nullptr;
        bool hasContent = false;
    };
    std::vector<CatalogueFigure> figures_;  // the figure catalogue's tabs, after the built-in ones
    LossCurvePanel* curves_ = nullptr;
    ForkPointSlider* forkPoints_ = nullptr;
    bool forkCrosshair_ = false;  // the slider pinned the curves' crosshair
    SpectrumTimeline* spectrum_ = nullptr;
    ScatterPanel* gain_ = nullptr;
    LandscapePanel* landscape_ = nullptr;
    EscapePanel* escape_ = nullptr;
    QComboBox* escapeTraces_ = nullptr;
    QHash<int, QString> reasons_;  // tab → why it is empty
    QStringList comparedRuns_;
    AblationPanel* ablation_ = nullptr;
    HistogramPanel* basins_ = nullptr;
    QCheckBox* thetaBox_ = nullptr;
    SweepPanel* sweep_ = nullptr;
    QComboBox* sweepMetric_ = nullptr;
    std::shared_ptr<const RunFolderData> sweepRun_;  // the run the Sweep tab shows

    LandscapePage* landscapeTab_ = nullptr;

    // Live escape data: occupancy per method (traces are appended to the panel as they come).
    QMap<QString, QPair<QVector<double>, QVector<double>>> occupancy_;
    QHash<QString, quint64> traceSeed_, spectrumSeed_;
    // The push (NaN: none yet) and each method's exits (first seed) now and at the push.
    double pushStep_ = 0;
    bool pushed_ = false;
    QHash<QString, quint64> exitsSeed_;
    QHash<QString, double> exitsNow_, exitsAtPush_;
    bool hasEscape_ = false, hasAblation_ = false, hasSpectrum_ = false;
    bool hasSweep_ = false;
};

}  // namespace liftlab
