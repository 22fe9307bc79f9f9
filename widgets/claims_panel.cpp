#include "claims_panel.h"

#include <qcustomplot.h>
#include <QFontMetrics>
#include <QHeaderView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

namespace liftlab {

namespace {

// The verdicts in legend order, with their colours.
struct VerdictStyle {
    const char* verdict;
    QColor colour;
};
const VerdictStyle kVerdicts[] = {{"holds", QColor(27, 127, 59)},
                                  {"refuted", QColor(176, 36, 24)},
                                  {"inconclusive", QColor(214, 150, 20)},
                                  {"not run", QColor(150, 150, 150)}};
constexpr double kAlphaLine = 0.05;
constexpr double kClaimsBarWidth = 0.7;
constexpr double kStubFraction = 0.02;  // the least bar height, as a share of the axis's top
constexpr double kLabelRotation = 35;   // degrees
constexpr int kRightPadPx = 8;

}  // namespace

ClaimsPanel::ClaimsPanel(QWidget* parent) : PlotPanel(parent, QSize(480, 420)) {
    plot_->yAxis->setLabel(tr("−log₁₀ p of the claim's test"));
    plot_->xAxis->grid()->setVisible(false);
    for (const auto& v : kVerdicts) {
        auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
        bars->setName(tr(v.verdict));
        bars->setWidth(kClaimsBarWidth);
        bars->setBrush(v.colour);
        bars->setPen(Qt::NoPen);
        bars_.push_back(bars);
    }
    auto* alpha = new QCPItemStraightLine(plot_);
    alpha->point1->setCoords(0, -std::log10(kAlphaLine));
    alpha->point2->setCoords(1, -std::log10(kAlphaLine));
    alpha->setPen(QPen(QColor(60, 60, 60), 1, Qt::DashLine));
    plot_->legend->setVisible(true);
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

    table_ = new QTableWidget(this);
    table_->setObjectName(QStringLiteral("claimsTable"));
    table_->setColumnCount(7);
    table_->setHorizontalHeaderLabels({tr("claim"), tr("measured"), tr("seeds"), tr("test"),
                                       tr("p"), tr("verdict"), tr("at the tuned best")});
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(true);
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setStretchLastSection(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    // The last header ("at the tuned best") is wider than a default section: it was clipped.
    table_->horizontalHeader()->setSectionResizeMode(6, QHeaderView::ResizeToContents);
    static_cast<QVBoxLayout*>(layout())->addWidget(table_, 1);
    static_cast<QVBoxLayout*>(layout())->setStretch(0, 1);
    setEmptyNote(tr("Open a claims folder (liftlab-cli claims) to see its table"));
    redraw();
}

void ClaimsPanel::setRows(const QVector<Row>& rows, const QString& whenNone) {
    rows_ = rows;
    whenNone_ = whenNone;
    redraw();
}

void ClaimsPanel::clear() {
    rows_.clear();
    whenNone_.clear();
    redraw();
}

void ClaimsPanel::redraw() {
    QVector<QVector<double>> keys(bars_.size()), values(bars_.size());
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QVector<double> heights;
    double top = -std::log10(kAlphaLine);
    for (const Row& r : rows_) {
        heights << (std::isfinite(r.p) && r.p > 0 ? -std::log10(r.p) : 0.0);
        top = std::max(top, heights.back());
    }
    for (int i = 0; i < rows_.size(); ++i) {
        const Row& r = rows_[i];
        int series = 2;  // inconclusive
        for (int v = 0; v < bars_.size(); ++v)
            if (r.verdict == QLatin1String(kVerdicts[v].verdict)) series = v;
        // Every claim keeps a visible stub in its verdict's colour: a claim without a p (not
        // run) and one whose test points the other way (p near 1, as a refuted one-sided claim)
        // would otherwise have no bar at all.
        keys[series] << i;
        values[series] << std::max(heights[i], kStubFraction * top);
        ticker->addTick(i, r.id);
    }
    for (int v = 0; v < bars_.size(); ++v) bars_[v]->setData(keys[v], values[v]);
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setTickLabelRotation(kLabelRotation);
    plot_->xAxis->setRange(-0.6, std::max<double>(rows_.size(), 1) - 0.4);
    plot_->yAxis->setRange(0, top * 1.12);
    // A rotated label runs right of its tick, past the axis rect; QCustomPlot's automatic right
    // margin does not count it, so the last claims' labels were not drawn. Leave room for the
    // widest label of the last few slots.
    const QFontMetrics metrics(plot_->xAxis->tickLabelFont());
    int overhang = 0;
    for (int i = std::max(0, int(rows_.size()) - 3); i < rows_.size(); ++i)
        overhang = std::max(overhang, metrics.horizontalAdvance(rows_[i].id));
    plot_->axisRect()->setAutoMargins(QCP::msLeft | QCP::msTop | QCP::msBottom);
    plot_->axisRect()->setMargins(
        QMargins(0, 0, int(overhang * std::cos(kLabelRotation * M_PI / 180.0)) + kRightPadPx, 0));
    setEmptyNote(!rows_.isEmpty() ? QString()
                 : !whenNone_.isEmpty()
                     ? whenNone_
                     : tr("Open a claims folder (liftlab-cli claims) to see its table"));

    table_->setRowCount(rows_.size());
    for (int i = 0; i < rows_.size(); ++i) {
        const Row& r = rows_[i];
        const QString verdict =
            r.needed.isEmpty() ? r.verdict
                               : r.verdict + QLatin1Char(' ') + tr("(to decide: %1)").arg(r.needed);
        const QString cells[] = {
            r.claim,
            r.ours,
            r.seeds,
            r.test,
            std::isfinite(r.p) ? QString::number(r.p, 'g', 3) : QStringLiteral("–"),
            verdict,
            r.tunedVerdict.isEmpty() ? QStringLiteral("–") : r.tunedVerdict};
        for (int c = 0; c < 7; ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            item->setToolTip(c == 0 ? r.id + QStringLiteral(" — paper: ") + r.paper +
                                          QStringLiteral(" (") + r.tier + QLatin1Char(')')
                                    : cells[c]);
            if (c == 5)
                for (const auto& v : kVerdicts)
                    if (r.verdict == QLatin1String(v.verdict)) item->setForeground(v.colour);
            table_->setItem(i, c, item);
        }
    }
    table_->resizeRowsToContents();
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace liftlab
