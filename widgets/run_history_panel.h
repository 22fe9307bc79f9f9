// The run-history browser of the LiftLab window: every run folder under a root (runs/ by default,
// `<preset>-YYYYmmdd-HHMMSS[-N]`, see run_folder_info.h) as one row — run, task, the user's model
// file, methods, seeds, steps, status (coloured dot), date to the second, and the best mean final
// test_loss over the methods (with that method's colour) — newest first. A filter line hides rows
// that do not contain every typed word. The root is watched: a new run folder appears, and a row
// follows its summary.json while the run is going ("running 3/12" → "ok"). Opening, comparing and
// revealing are requests by signal; the panel never loads a run itself. Drops of a run folder (or
// of its spec.json, summary.json or metrics.csv) ask to open it. GUI thread only.
//
// A run forked from another (spec.json "parent", liftlab-cli run --fork or the window's "Fork
// from step N…") is listed under its parent in a tree ("run · fork @40"), sorted among its
// siblings. The parts: RunFolderScanner (scan and watch), RunHistoryModel (the rows, a tree
// model), RunHistorySortProxy and RunHistoryFilterProxy (sort and filter) and a QTreeView.
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>

#include "run_folder_info.h"
#include "run_history_model.h"

class QDragEnterEvent;
class QDragMoveEvent;
class QDropEvent;
class QLabel;
class QLineEdit;
class QMenu;
class QMimeData;
class QModelIndex;
class QPushButton;
class QTreeView;

namespace liftlab {

class RunFolderScanner;
class RunHistoryFilterProxy;
class RunHistorySortProxy;

class RunHistoryPanel : public QWidget {
    Q_OBJECT
public:
    enum Column {
        ColRun = RunHistoryModel::ColRun,
        ColTask = RunHistoryModel::ColTask,
        ColModel = RunHistoryModel::ColModel,
        ColMethods = RunHistoryModel::ColMethods,
        ColSeeds = RunHistoryModel::ColSeeds,
        ColSteps = RunHistoryModel::ColSteps,
        ColStatus = RunHistoryModel::ColStatus,
        ColDate = RunHistoryModel::ColDate,
        ColBest = RunHistoryModel::ColBest
    };
    // How many runs one comparison holds at most (their line styles: solid, dashed, dotted).
    static constexpr int kMaxCompared = 3;

    explicit RunHistoryPanel(QWidget* parent = nullptr);

    // Lists the run folders under `dir` (findRunFolders with scanDepth()) and watches it; an
    // empty string clears the list.
    void setRoot(const QString& dir);
    QString root() const;
    // How deep below the root to look (2: root/run and root/group/run). Rescans.
    void setScanDepth(int depth);
    int scanDepth() const;
    // Rescans the root and re-reads every folder.
    Q_SLOT void refresh();

    // Rows in display order (newest first unless the user sorted by another column; a fork
    // right after its parent, below its earlier siblings' families). Rows hidden by the filter
    // are counted and returned too; visibleRunCount() counts the shown ones.
    int runCount() const;
    int visibleRunCount() const;
    QString runAt(int row) const;  // the folder path; empty for a row out of range
    bool isRowHidden(int row) const;
    // The text of a cell of row `row` (display order), "" out of range.
    QString cellText(int row, int column) const;
    // Where row `row` is drawn in the view's viewport (scrolled to first); empty when hidden.
    QRect rowRect(int row);
    // Adds row `row` to the selection (or takes it out).
    void setRowSelected(int row, bool selected);
    // What was read from the folder (valid = false for an unknown path).
    RunFolderInfo runInfo(const QString& path) const;
    // The listed run a run was forked from ("" for a run from scratch or an unlisted parent).
    QString parentRun(const QString& path) const;

    void setFilterText(const QString& text);
    QString filterText() const;

    // Selects only this run (clearing the filter if it hides it) and scrolls to it.
    void selectRun(const QString& path);
    QStringList selectedRuns() const;  // in display order

    // The run folder named by dropped data: a local directory URL that looksLikeRunFolder, or a
    // spec.json / summary.json / metrics.csv inside one; "" when there is none.
    static QString runFolderFromMime(const QMimeData* mime);

    // The context menu of a row (Open, Compare, Open folder, Copy path) for `path`; the caller
    // owns it. Public so tests can trigger its actions.
    QMenu* createContextMenu(const QString& path);

    QTreeView* tree() const { return view_; }
    RunHistoryModel* model() const { return model_; }
    RunFolderScanner* scanner() const { return scanner_; }
    QLineEdit* filterEdit() const { return filter_; }
    QPushButton* openButton() const { return openButton_; }
    QPushButton* compareButton() const { return compareButton_; }

Q_SIGNALS:
    void openRequested(const QString& path);
    // Two or three runs (kMaxCompared), the oldest first.
    void compareRequested(const QStringList& runs);
    // "Open folder": the application shows the folder in the file manager.
    void revealRequested(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void onScanned(const QStringList& runs, const QStringList& reread);
    // Every row of the sort proxy, depth first: the display order, hidden rows included.
    QList<QModelIndex> sortedRows() const;
    QModelIndex viewIndex(int row) const;  // invalid when hidden or out of range
    void updateButtons();
    void updateFooter();
    void openCurrent();
    void compareSelected();
    bool isOpenable(const QString& path) const;
    bool canCompare(const QStringList& runs) const;

    QLineEdit* filter_;
    QPushButton* openButton_;
    QPushButton* compareButton_;
    QTreeView* view_;
    QLabel* footer_;
    RunFolderScanner* scanner_;
    RunHistoryModel* model_;
    RunHistorySortProxy* sorted_;
    RunHistoryFilterProxy* filtered_;
};

}  // namespace liftlab
