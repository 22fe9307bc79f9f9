// The sorting and filtering of the run history, as two QSortFilterProxyModels over
// RunHistoryModel (the view shows the filter proxy, which shows the sort proxy):
// - RunHistorySortProxy sorts by each cell's RunHistoryModel::kSortRole (numbers as numbers,
//   text case-insensitively), ties broken by date, then path; forked runs are sorted among their
//   siblings under their parent.
// - RunHistoryFilterProxy keeps the rows that contain every typed word (in any column, the
//   folder's name or the preset's), and the parents of such rows (recursive filtering). It does
//   not sort: a sort asked of it (a click on the view's header) goes to the sort proxy, so the
//   sorted order of every row, shown or not, is the sort proxy's.
#pragma once
#include <QSortFilterProxyModel>
#include <QStringList>

namespace liftlab {

class RunHistorySortProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RunHistorySortProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

class RunHistoryFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit RunHistoryFilterProxy(QObject* parent = nullptr);
    // Words separated by spaces; a row is kept when it contains every one (case-insensitive).
    void setWords(const QString& text);
    QStringList words() const { return words_; }
    // Sorts the source (a RunHistorySortProxy), not this proxy.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QStringList words_;
};

}  // namespace liftlab
