#include "ablation_panel.h"

#include <qcustomplot.h>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "axis_rect_style.h"
#include "method_colors.h"
#include "plot_style.h"

namespace liftlab {

namespace {

constexpr double kAblationBarWidth = 0.6;  // in category units
constexpr double kLabelRoom = 0.16;        // share of the span kept free for the p labels
constexpr double kPlainMargin = 0.06;      // share of the span on a side without labels
constexpr double kSignificance = 0.05;
constexpr int kRotateLabelsAbove = 6;  // more categories than this: slanted method names

bool validP(double p) {
    return std::isfinite(p) && p >= 0 && p <= 1;
}

}  // namespace

AblationPanel::AblationPanel(QWidget* parent) : PlotPanel(parent) {
    plot_->legend->setVisible(false);  // the categories name the bars
    plot_->xAxis->grid()->setVisible(false);
    plot_->xAxis->grid()->setSubGridVisible(false);
    for (QCPAxis* axis : {plot_->yAxis, plot_->yAxis2}) {
        axis->setNumberFormat(QStringLiteral("gbc"));  // 2×10⁻⁴ rather than 0.0002
        axis->setNumberPrecision(3);
    }
    setValueLabel(tr("value"));
    // A note row under the plot.
    QFont small = plot_->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    note_ = new QCPTextElement(plot_, tr("error bars ± sd  ·  * p < 0.05"), small);
    note_->setTextColor(QColor(100, 100, 100));
    note_->setMargins(QMargins(0, 0, 0, 4));
    plot_->plotLayout()->addElement(1, 0, note_);
    plot_->setInteractions(QCP::iRangeZoom);
    plot_->axisRect()->setRangeZoom(Qt::Vertical);
    connect(plot_, &QCustomPlot::mouseDoubleClick, this, [this] { redraw(); });
    redraw();
}

void AblationPanel::setValueLabel(const QString& label) {
    plot_->yAxis->setLabel(label);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void AblationPanel::setNote(const QString& note) {
    note_->setText(note);
    note_->setVisible(!note.isEmpty());
    // An invisible element still takes its row: collapse it.
    note_->setMinimumSize(0, 0);
    note_->setMaximumSize(QWIDGETSIZE_MAX, note.isEmpty() ? 0 : QWIDGETSIZE_MAX);
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

QString AblationPanel::formatP(double p) {
    if (!validP(p)) return QString();
    if (p < 0.001) return QStringLiteral("p < 0.001");
    if (p >= 0.9995) return QStringLiteral("p = 1");
    QString digits = QString::number(p, 'f', 3);
    // Rounding must not carry a significant p to the 0.05 boundary (0.0498 → "0.050").
    if (p < kSignificance && digits.toDouble() >= kSignificance)
        digits = QString::number(p, 'f', 4);
    while (digits.endsWith(QLatin1Char('0'))) digits.chop(1);
    return QStringLiteral("p = ") + digits;
}

QString AblationPanel::pLabel(const QString& method) const {
    for (const Bar& b : bars_)
        if (b.method == method) return formatP(b.p);
    return QString();
}

bool AblationPanel::isSignificant(const QString& method) const {
    for (const Bar& b : bars_)
        if (b.method == method) return validP(b.p) && b.p < kSignificance;
    return false;
}

void AblationPanel::setBar(const QString& method, double value, double errorSd, double pValue) {
    if (!std::isfinite(value)) return;
    upsert(
        {method, value, std::isfinite(errorSd) && errorSd > 0 ? errorSd : 0.0, pValue, QString()});
}

void AblationPanel::upsert(const Bar& bar) {
    auto it = std::find_if(bars_.begin(), bars_.end(),
                           [&](const Bar& b) { return b.method == bar.method; });
    if (it != bars_.end())
        *it = bar;
    else
        bars_.push_back(bar);
    redraw();
}

void AblationPanel::setStructuralZero(const QString& method, const QString& label) {
    upsert({method, 0.0, 0.0, NAN, label.isEmpty() ? QStringLiteral("0") : label});
}

bool AblationPanel::isStructuralZero(const QString& method) const {
    for (const Bar& b : bars_)
        if (b.method == method) return !b.structural.isEmpty();
    return false;
}

void AblationPanel::clear() {
    bars_.clear();
    redraw();
}

void AblationPanel::redraw() {
    plot_->clearPlottables();
    plot_->clearItems();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QFont bold = plot_->font();
    bold.setBold(true);
    double lo = 0, hi = 0;
    bool labelAbove = false, labelBelow = false;
    for (int i = 0; i < bars_.size(); ++i) {
        const Bar& b = bars_[i];
        const double key = i + 1;
        ticker->addTick(key, b.method);
        if (!b.structural.isEmpty()) {
            // No bar: the label sits on the zero line, in the method's colour.
            auto* label = new QCPItemText(plot_);
            label->position->setCoords(key, 0.0);
            label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
            label->setPadding(QMargins(0, 0, 0, 4));
            label->setText(b.structural);
            label->setColor(methodColor(b.method).darker(140));
            label->setClipToAxisRect(false);
            labelAbove = true;
            continue;
        }
        const QColor c = methodColor(b.method);
        QColor fill = c;
        fill.setAlpha(200);
        auto* bars = new QCPBars(plot_->xAxis, plot_->yAxis);
        bars->setName(b.method);
        bars->setWidth(kAblationBarWidth);
        bars->setPen(QPen(c.darker(135), 1.2));
        bars->setBrush(fill);
        bars->setData({key}, {b.value}, /*alreadySorted=*/true);
        if (b.sd > 0) {
            auto* errors = new QCPErrorBars(plot_->xAxis, plot_->yAxis);
            errors->removeFromLegend();
            errors->setDataPlottable(bars);
            errors->setData(QVector<double>{b.sd});
            errors->setPen(QPen(QColor(40, 40, 40), 1.4));
            errors->setWhiskerWidth(14);
            errors->setSymbolGap(0);  // one unbroken line through the end of the bar
        }
        const double top = b.value + b.sd, bottom = b.value - b.sd;
        lo = std::min(lo, bottom);
        hi = std::max(hi, top);
        if (!validP(b.p)) continue;
        // The label sits beyond the end of the bar and its error bar, away from zero.
        const bool up = b.value >= 0;
        auto* label = new QCPItemText(plot_);
        label->position->setCoords(key, up ? top : bottom);
        label->setPositionAlignment(Qt::AlignHCenter | (up ? Qt::AlignBottom : Qt::AlignTop));
        label->setPadding(up ? QMargins(0, 0, 0, 4) : QMargins(0, 4, 0, 0));
        const bool significant = b.p < kSignificance;
        label->setText(formatP(b.p) + (significant ? QStringLiteral(" *") : QString()));
        label->setFont(significant ? bold : plot_->font());
        label->setColor(significant ? QColor(20, 20, 20) : QColor(90, 90, 90));
        label->setClipToAxisRect(false);
        (up ? labelAbove : labelBelow) = true;
    }
    for (QCPAxis* axis : {plot_->xAxis, plot_->xAxis2}) {
        axis->setTicker(ticker);
        axis->setSubTicks(false);
        axis->setTickLabelRotation(bars_.size() > kRotateLabelsAbove ? 30 : 0);
    }
    plot_->xAxis->setRange(0.4, std::max<int>(bars_.size(), 1) + 0.6);
    // The zero line every bar grows from.
    auto* zero = new QCPItemStraightLine(plot_);
    zero->point1->setCoords(0, 0);
    zero->point2->setCoords(1, 0);
    zero->setPen(QPen(QColor(60, 60, 60), 1.2));
    // y covers 0 and every bar ± sd, with room for the labels.
    double span = hi - lo;
    if (!(span > 0)) span = 1.0;  // nothing but exact zeros
    plot_->yAxis->setRange(lo - span * (labelBelow ? kLabelRoom : kPlainMargin),
                           hi + span * (labelAbove ? kLabelRoom : kPlainMargin));
    if (bars_.isEmpty()) {
        // Over the zero line: on a background of its own.
        QCPItemText* note = addEmptyNote(plot_, plot_->axisRect(),
                                         emptyReason_.isEmpty() ? tr("no bars") : emptyReason_);
        note->setBrush(QColor(255, 255, 255, 235));
        note->setPadding(QMargins(8, 4, 8, 4));
    }
    plot_->replot(QCustomPlot::rpQueuedReplot);
}

void AblationPanel::setEmptyReason(const QString& reason) {
    emptyReason_ = reason;
    redraw();
}

bool AblationPanel::exportTo(const QString& path, int width, int height) {
    return exportPlot(plot_, path, width, height, plot_->yAxis->label());
}

}  // namespace liftlab
