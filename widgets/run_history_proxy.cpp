#include "run_history_proxy.h"

#include <QFileInfo>

#include "run_history_model.h"

namespace liftlab {

RunHistorySortProxy::RunHistorySortProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(RunHistoryModel::kSortRole);
    setDynamicSortFilter(true);  // a row that changes (a run finishing) moves to its place
}

bool RunHistorySortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const QVariant a = left.data(RunHistoryModel::kSortRole),
                   b = right.data(RunHistoryModel::kSortRole);
    if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double) {
        if (a.toDouble() != b.toDouble()) return a.toDouble() < b.toDouble();
    } else if (a.typeId() == QMetaType::QString && b.typeId() == QMetaType::QString) {
        const int c = QString::compare(a.toString(), b.toString(), Qt::CaseInsensitive);
        if (c != 0) return c < 0;
    }
    const double ta = left.data(RunHistoryModel::kDateRole).toDouble();
    const double tb = right.data(RunHistoryModel::kDateRole).toDouble();
    if (ta != tb) return ta < tb;
    return left.data(RunHistoryModel::kPathRole).toString() <
           right.data(RunHistoryModel::kPathRole).toString();
}

RunHistoryFilterProxy::RunHistoryFilterProxy(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);  // a matching fork keeps its parent shown
    setDynamicSortFilter(true);
}

void RunHistoryFilterProxy::setWords(const QString& text) {
    words_ = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    invalidateRowsFilter();
}

void RunHistoryFilterProxy::sort(int column, Qt::SortOrder order) {
    if (auto* source = qobject_cast<QSortFilterProxyModel*>(sourceModel()))
        source->sort(column, order);
}

bool RunHistoryFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    if (words_.isEmpty()) return true;
    const QAbstractItemModel* m = sourceModel();
    const QModelIndex first = m->index(sourceRow, 0, sourceParent);
    const QString path = first.data(RunHistoryModel::kPathRole).toString();
    QString haystack = QFileInfo(path).fileName() + QLatin1Char('\n') +
                       first.data(RunHistoryModel::kNameRole).toString();
    for (int c = 0; c < m->columnCount(sourceParent); ++c)
        haystack += QLatin1Char('\n') + m->index(sourceRow, c, sourceParent).data().toString();
    for (const QString& w : words_)
        if (!haystack.contains(w, Qt::CaseInsensitive)) return false;
    return true;
}

}  // namespace liftlab
