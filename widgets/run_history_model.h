// The run history as an item model: one row per run folder (HistoryRun, run_folder_scanner.h),
// forked runs as children of their parent run (spec.json "parent") when the parent is listed,
// with the columns of the history browser. Each cell has its text (DisplayRole), a tooltip, an
// icon (status dot, best method's colour swatch), and a sort key (kSortRole: a number for
// numeric columns, else text). A refresh that keeps the same runs and parents changes rows in
// place (dataChanged); a new, removed or re-parented run resets the model. GUI thread only.
#pragma once
#include <QAbstractItemModel>
#include <QHash>
#include <QIcon>
#include <QMap>
#include <QVector>

#include "run_folder_scanner.h"

namespace liftlab {

class RunHistoryModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column {
        ColRun,
        ColTask,
        ColModel,
        ColMethods,
        ColSeeds,
        ColSteps,
        ColStatus,
        ColDate,
        ColBest,
        ColumnCount
    };
    static constexpr int kPathRole = Qt::UserRole;      // the run folder (every column)
    static constexpr int kSortRole = Qt::UserRole + 1;  // what the column sorts by
    static constexpr int kDateRole = Qt::UserRole + 2;  // ms since the epoch (ties, any column)
    static constexpr int kNameRole = Qt::UserRole + 3;  // the spec's name (the preset)

    explicit RunHistoryModel(QObject* parent = nullptr);

    // Shows `runs`; `changed` names the ones read again since the last call.
    void setRuns(const QMap<QString, HistoryRun>& runs, const QStringList& changed);
    int runCount() const { return rows_.size(); }
    const HistoryRun* record(const QString& path) const;
    QModelIndex indexOfPath(const QString& path, int column = ColRun) const;
    // The listed parent of a run ("" for a top-level row).
    QString parentRun(const QString& path) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        HistoryRun record;
        QString text[ColumnCount], tip[ColumnCount];
        QVariant sort[ColumnCount];
        QIcon statusIcon, bestIcon;
        int parent = -1;  // index in rows_ of the listed parent
        QVector<int> children;
        int position = 0;  // row under its parent
    };
    static Row makeRow(const HistoryRun& record);
    static void fillBest(const RunFolderInfo& info, Row* row);
    // Each run's listed parent ("" for none): a parent that is not listed, the run itself or a
    // cycle of parents makes it a top-level row.
    static QMap<QString, QString> treeOf(const QMap<QString, HistoryRun>& runs);

    QVector<Row> rows_;
    QVector<int> roots_;
    QHash<QString, int> byPath_;
    QMap<QString, QString> tree_;  // path → listed parent, as shown now
};

}  // namespace liftlab
