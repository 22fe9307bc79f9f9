#include "run_history_model.h"

#include <QApplication>
#include <QFileInfo>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QRegularExpression>
#include <algorithm>
#include <limits>

#include "method_colors.h"
#include "run_folder_schema.h"

namespace liftlab {

namespace {

constexpr int kIconSize = 12;  // logical pixels of the status dot and the method swatch

// A run's status from the runner (RunStatus) or the browser's own ("stalled", "invalid", …).
QColor statusColor(const QString& status) {
    const auto run = parse_run_status(status.toStdString());
    if (run == RunStatus::Ok) return QColor(0x2c, 0xa0, 0x2c);
    if (run == RunStatus::Running) return QColor(0x1f, 0x77, 0xb4);
    if (run == RunStatus::Cancelled || status == QLatin1String("stalled") ||
        status == QLatin1String("killed"))
        return QColor(0xe6, 0x9f, 0x00);
    if ((run && stopped_early(*run)) || status == QLatin1String("invalid"))
        return QColor(0xd6, 0x27, 0x28);
    return QColor(0x9e, 0x9e, 0x9e);
}

// A transparent kIconSize square drawn at twice the resolution (sharp on high-dpi screens).
QPixmap iconCanvas() {
    const qreal dpr = 2.0;
    QPixmap pm(int(kIconSize * dpr), int(kIconSize * dpr));
    pm.setDevicePixelRatio(dpr);
    pm.fill(Qt::transparent);
    return pm;
}

// A filled dot; a ring for folders whose status is not known (incomplete, invalid).
QIcon statusIcon(const QString& status) {
    QPixmap pm = iconCanvas();
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor c = statusColor(status);
    const bool ring = status == QLatin1String("incomplete") || status == QLatin1String("invalid");
    // A white halo keeps the dot visible on the selection highlight (blue on blue otherwise).
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(255, 255, 255, 220));
    p.drawEllipse(QRectF(0.8, 0.8, kIconSize - 1.6, kIconSize - 1.6));
    p.setPen(QPen(ring ? c : c.darker(125), ring ? 1.6 : 0.8));
    p.setBrush(ring ? QBrush(Qt::NoBrush) : QBrush(c));
    p.drawEllipse(QRectF(2.0, 2.0, kIconSize - 4.0, kIconSize - 4.0));
    p.end();
    return QIcon(pm);
}

QIcon swatchIcon(const QColor& color) {
    QPixmap pm = iconCanvas();
    QPainter p(&pm);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QPen(color.darker(130), 0.8));
    p.setBrush(color);
    p.drawRoundedRect(QRectF(2.0, 2.5, kIconSize - 4.0, kIconSize - 5.0), 1.5, 1.5);
    return QIcon(pm);
}

QString lossText(double v) {
    return QString::number(v, 'g', 4);
}

const char* const kHeaders[] = {"run",   "task",   "model", "methods",    "seeds",
                                "steps", "status", "date",  "best result"};

}  // namespace

RunHistoryModel::RunHistoryModel(QObject* parent) : QAbstractItemModel(parent) {}

// The best-result cell: the best mean final value and its method's colour; the tooltip lists
// every method, best first.
void RunHistoryModel::fillBest(const RunFolderInfo& info, Row* row) {
    Row& r = *row;
    QString best;
    double value = 0;
    r.sort[ColBest] = std::numeric_limits<double>::infinity();
    if (bestFinalResult(info, &best, &value)) {
        // Classification runs are ranked by accuracy (ce's cross-entropy and the squared losses
        // are not comparable), the others by test loss.
        const bool accuracy = info.bestMetric == QLatin1String("test_accuracy");
        r.text[ColBest] = accuracy ? tr("acc %1  %2").arg(lossText(value), best)
                                   : tr("%1  %2").arg(lossText(value), best);
        r.bestIcon = swatchIcon(methodColor(best));
        // Ascending order lists the best first: lowest loss, highest accuracy (negated).
        r.sort[ColBest] = accuracy ? -value : value;
        // Every method, best first: the mean over seeds of the final value.
        QList<QPair<double, QString>> all;
        for (auto it = info.bestFinal.cbegin(); it != info.bestFinal.cend(); ++it)
            all.append({accuracy ? -it.value() : it.value(), it.key()});
        std::sort(all.begin(), all.end());
        QStringList lines{tr("mean final %1 over seeds:").arg(info.bestMetric)};
        for (const auto& [v, m] : all)
            lines << QStringLiteral("%1\t%2").arg(m, lossText(accuracy ? -v : v));
        r.tip[ColBest] = lines.join(QStringLiteral("\n"));
    }
}

// The cells of one run (what the old QTreeWidget row held).
RunHistoryModel::Row RunHistoryModel::makeRow(const HistoryRun& record) {
    const RunFolderInfo& info = record.info;
    Row r;
    r.record = record;
    // The folder's name without the timestamp the date column shows; "#2" for a "-2" suffix.
    const QString folder = QFileInfo(info.path).fileName();
    QString prefix, shown = folder;
    if (timestampFromFolderName(folder, &prefix).isValid()) {
        static const QRegularExpression suffix(QStringLiteral("-\\d{6}-(\\d+)$"));
        const QRegularExpressionMatch m = suffix.match(folder);
        shown = m.hasMatch() ? tr("%1 #%2").arg(prefix, m.captured(1)) : prefix;
    }
    QString tip = info.path;
    if (!record.parent.isEmpty()) {
        shown += tr(" · fork @%1").arg(record.forkStep);
        tip += tr("\nforked from %1 after step %2").arg(record.parent).arg(record.forkStep);
    }
    if (!info.error.isEmpty()) tip += QStringLiteral("\n") + info.error;
    r.text[ColRun] = shown;
    r.sort[ColRun] = folder;
    r.tip[ColRun] = tip;

    r.text[ColTask] = info.taskKind;
    r.sort[ColTask] = info.taskKind;
    const QString model =
        info.modelFile.isEmpty() ? tr("built-in") : QFileInfo(info.modelFile).fileName();
    r.text[ColModel] = model;
    r.sort[ColModel] = model;
    r.tip[ColModel] = info.modelFile.isEmpty() ? tr("the preset's own model") : info.modelFile;

    QString methods = info.methods.join(QStringLiteral(", "));
    if (!info.sweepKey.isEmpty()) methods += tr("  × %1").arg(info.sweepKey);
    r.text[ColMethods] = methods;
    r.sort[ColMethods] = methods;
    r.tip[ColMethods] = info.methods.join(QStringLiteral("\n"));
    if (!info.sweepKey.isEmpty())
        r.tip[ColMethods] +=
            tr("\nsweep over %1: %n value(s)", nullptr, info.sweepValues).arg(info.sweepKey);

    r.text[ColSeeds] = info.valid ? seedsText(info.seedValues) : QString();
    r.tip[ColSeeds] = tr("%n seed(s)", nullptr, info.seeds);
    r.sort[ColSeeds] = double(info.seeds);
    r.text[ColSteps] = info.valid ? QString::number(info.steps) : QString();
    r.sort[ColSteps] = double(info.steps);

    QString status = info.status;
    if (parse_run_status(status.toStdString()) == RunStatus::Running && info.runsTotal > 0)
        status = tr("running %1/%2").arg(info.runsDone).arg(info.runsTotal);
    r.text[ColStatus] = status;
    r.statusIcon = statusIcon(info.status);
    r.sort[ColStatus] = info.status;
    r.tip[ColStatus] = info.error.isEmpty()
                           ? tr("%1 of %2 runs finished").arg(info.runsDone).arg(info.runsTotal)
                           : info.error;

    r.text[ColDate] = info.created.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    r.tip[ColDate] = r.text[ColDate];
    r.sort[ColDate] = info.created.isValid() ? double(info.created.toMSecsSinceEpoch()) : 0.0;

    fillBest(info, &r);
    // A folder that cannot be opened: the reason in every tooltip.
    if (!info.valid)
        for (QString& t : r.tip) t = tip;
    return r;
}

QMap<QString, QString> RunHistoryModel::treeOf(const QMap<QString, HistoryRun>& runs) {
    QMap<QString, QString> tree;
    for (auto it = runs.cbegin(); it != runs.cend(); ++it) {
        QString parent = it->parent;
        if (!runs.contains(parent) || parent == it.key()) parent.clear();
        // Up the chain of listed parents: a run inside a cycle of parents is a top-level row.
        QString at = parent;
        for (int hops = 0; !at.isEmpty() && runs.contains(at) && hops <= runs.size(); ++hops) {
            if (at == it.key()) {
                parent.clear();
                break;
            }
            at = runs.value(at).parent;
        }
        tree.insert(it.key(), parent);
    }
    return tree;
}

void RunHistoryModel::setRuns(const QMap<QString, HistoryRun>& runs, const QStringList& changed) {
    const QMap<QString, QString> tree = treeOf(runs);
    if (tree == tree_) {
        for (const QString& path : changed) {
            const int i = byPath_.value(path, -1);
            if (i < 0) continue;
            Row row = makeRow(runs.value(path));
            row.parent = rows_[i].parent;
            row.children = rows_[i].children;
            row.position = rows_[i].position;
            rows_[i] = row;
            const QModelIndex first = indexOfPath(path, 0);
            Q_EMIT dataChanged(first, first.siblingAtColumn(ColumnCount - 1));
        }
        return;
    }
    beginResetModel();
    rows_.clear();
    roots_.clear();
    byPath_.clear();
    tree_ = tree;
    for (auto it = runs.cbegin(); it != runs.cend(); ++it) {
        byPath_.insert(it.key(), rows_.size());
        rows_.push_back(makeRow(*it));
    }
    for (int i = 0; i < rows_.size(); ++i) {
        const QString parent = tree_.value(rows_[i].record.info.path);
        const int p = parent.isEmpty() ? -1 : byPath_.value(parent, -1);
        rows_[i].parent = p;
        QVector<int>& siblings = p < 0 ? roots_ : rows_[p].children;
        rows_[i].position = siblings.size();
        siblings.push_back(i);
    }
    endResetModel();
}

const HistoryRun* RunHistoryModel::record(const QString& path) const {
    const int i = byPath_.value(path, -1);
    return i < 0 ? nullptr : &rows_[i].record;
}

QString RunHistoryModel::parentRun(const QString& path) const {
    return tree_.value(path);
}

QModelIndex RunHistoryModel::indexOfPath(const QString& path, int column) const {
    const int i = byPath_.value(path, -1);
    return i < 0 ? QModelIndex() : createIndex(rows_[i].position, column, quintptr(i));
}

QModelIndex RunHistoryModel::index(int row, int column, const QModelIndex& parent) const {
    if (column < 0 || column >= ColumnCount || row < 0) return {};
    const QVector<int>& list = parent.isValid() ? rows_[int(parent.internalId())].children : roots_;
    return row < list.size() ? createIndex(row, column, quintptr(list[row])) : QModelIndex();
}

QModelIndex RunHistoryModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const int p = rows_[int(child.internalId())].parent;
    return p < 0 ? QModelIndex() : createIndex(rows_[p].position, 0, quintptr(p));
}

int RunHistoryModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return roots_.size();
    return parent.column() == 0 ? rows_[int(parent.internalId())].children.size() : 0;
}

int RunHistoryModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

QVariant RunHistoryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const Row& r = rows_[int(index.internalId())];
    const int c = index.column();
    switch (role) {
        case Qt::DisplayRole:
            return r.text[c];
        case Qt::ToolTipRole:
            return r.tip[c];
        case kPathRole:
            return r.record.info.path;
        case kSortRole:
            return r.sort[c];
        case kDateRole:
            return r.sort[ColDate];
        case kNameRole:
            return r.record.info.name;
        case Qt::DecorationRole:
            if (c == ColStatus) return r.statusIcon;
            if (c == ColBest && !r.bestIcon.isNull()) return r.bestIcon;
            return {};
        case Qt::TextAlignmentRole:
            if (c == ColSeeds || c == ColSteps) return int(Qt::AlignRight | Qt::AlignVCenter);
            return {};
        case Qt::ForegroundRole:
            // A folder that cannot be opened is listed greyed.
            if (!r.record.info.valid)
                return QApplication::palette().brush(QPalette::Disabled, QPalette::Text);
            return {};
        default:
            return {};
    }
}

QVariant RunHistoryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return tr(kHeaders[section]);
    if (role == Qt::TextAlignmentRole && (section == ColSeeds || section == ColSteps))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

}  // namespace liftlab
