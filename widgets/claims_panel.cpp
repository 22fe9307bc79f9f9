#include "claims_panel.h"

#include <qcustomplot.h>
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
    static_cast<QVBoxLayout*>(layout())->addWidget(table_, 1);
    static_cast<QVBoxLayout*>(layout())->setStretch(0, 1);
    setEmptyNote(tr("Open a claims folder (liftlab-cli claims) to see its table"));
    redraw();
}

void ClaimsPanel::setRows(const QVector<Row>& rows) {
    rows_ = rows;
    redraw();
}

void ClaimsPanel::clear() {
    rows_.clear();
    redraw();
}

void ClaimsPanel::redraw() {
    QVector<QVector<double>> keys(bars_.size()), values(bars_.size());
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double top = -std::log10(kAlphaLine);
    for (int i = 0; i < rows_.size(); ++i) {
        const Row& r = rows_[i];
        int series = 2;  // inconclusive
        for (int v = 0; v < bars_.size(); ++v)
            if (r.verdict == QLatin1String(kVerdicts[v].verdict)) series = v;
        // A missing p (not run, no test) is a stub bar so that the claim still has its slot.
        const double height = std::isfinite(r.p) && r.p > 0 ? -std::log10(r.p) : 0.05;
        keys[series] << i;
        values[series] << height;
        ticker->addTick(i, r.id);
        top = std::max(top, height);
    }
    for (int v = 0; v < bars_.size(); ++v) bars_[v]->setData(keys[v], values[v]);
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setTickLabelRotation(35);
    plot_->xAxis->setRange(-0.6, std::max<double>(rows_.size(), 1) - 0.4);
    plot_->yAxis->setRange(0, top * 1.12);
    setEmptyNote(rows_.isEmpty() ? tr("Open a claims folder (liftlab-cli claims) to see its table")
                                 : QString());

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
