#include "curve_crosshair.h"

#include <qcustomplot.h>
#include <QFontMetrics>

namespace liftlab {

namespace {
constexpr int kBoxGap = 8;  // pixels between the crosshair line and its box
}  // namespace

CurveCrosshair::CurveCrosshair(QCustomPlot* plot, const QString& layer)
    : plot_(plot), layer_(layer) {
    plot_->layer(layer_)->setMode(QCPLayer::lmBuffered);
    line_ = new QCPItemLine(plot_);
    line_->setLayer(layer_);
    line_->setPen(QPen(QColor(80, 80, 80), 1.0, Qt::DashLine));
    for (QCPItemPosition* p : {line_->start, line_->end}) {
        p->setAxes(plot_->xAxis, plot_->yAxis);
        p->setAxisRect(plot_->axisRect());
        p->setTypeX(QCPItemPosition::ptPlotCoords);
        p->setTypeY(QCPItemPosition::ptAxisRectRatio);  // from the top (0) to the bottom (1)
    }
    box_ = new QCPItemText(plot_);
    box_->setLayer(layer_);
    box_->setClipToAxisRect(false);
    box_->position->setParentAnchor(line_->start);  // pixels from the line top
    box_->setTextAlignment(Qt::AlignLeft);
    box_->setPadding(QMargins(6, 4, 6, 4));
    box_->setBrush(QColor(255, 255, 255, 235));
    box_->setPen(QPen(QColor(150, 150, 150)));
    box_->setColor(QColor(30, 30, 30));
    setVisible(false);
}

void CurveCrosshair::place(double step, const QString& text, const QVector<Dot>& dots,
                           const QRect& avoid) {
    step_ = step;
    line_->start->setCoords(step, 0.0);
    line_->end->setCoords(step, 1.0);
    box_->setText(text);

    const QRect rect = plot_->axisRect()->rect();
    const QSize box = QFontMetrics(box_->font())
                          .boundingRect(QRect(0, 0, 4096, 4096), Qt::AlignLeft | Qt::AlignTop, text)
                          .size()
                          .grownBy(box_->padding());
    const double px = plot_->xAxis->coordToPixel(step);
    const QCPRange x = plot_->xAxis->range();
    const bool fitsRight = px + kBoxGap + box.width() <= rect.right();
    const bool fitsLeft = px - kBoxGap - box.width() >= rect.left();
    const bool preferRight = x.size() <= 0 || (step - x.lower) / x.size() < 0.55;
    const bool right = preferRight ? fitsRight || !fitsLeft : !fitsLeft && fitsRight;
    const double left = right ? px + kBoxGap : px - kBoxGap - box.width();
    double dy = kBoxGap;
    if (avoid.isValid() && left < avoid.right() && left + box.width() > avoid.left())
        dy = avoid.bottom() - rect.top() + kBoxGap;
    box_->setPositionAlignment(Qt::AlignTop | (right ? Qt::AlignLeft : Qt::AlignRight));
    box_->position->setCoords(right ? kBoxGap : -kBoxGap, dy);

    while (tracers_.size() < dots.size()) {
        auto* t = new QCPItemTracer(plot_);
        t->setLayer(layer_);
        t->setStyle(QCPItemTracer::tsCircle);
        t->setSize(7);
        t->setBrush(Qt::white);
        tracers_.push_back(t);
        used_.push_back(false);
    }
    for (int k = 0; k < tracers_.size(); ++k) {
        QCPItemTracer* t = tracers_[k];
        used_[k] = k < dots.size() && dots[k].used;
        if (used_[k]) {
            t->position->setCoords(dots[k].step, dots[k].value);
            t->setPen(QPen(dots[k].colour, 1.8));
        }
        t->setVisible(used_[k] && line_->visible());
    }
}

void CurveCrosshair::setVisible(bool on) {
    line_->setVisible(on);
    box_->setVisible(on);
    for (int k = 0; k < tracers_.size(); ++k) tracers_[k]->setVisible(on && used_[k]);
}

bool CurveCrosshair::visible() const {
    return line_->visible();
}

QString CurveCrosshair::text() const {
    return visible() ? box_->text() : QString();
}

void CurveCrosshair::replotOverlay() {
    plot_->layer(layer_)->replot();
}

}  // namespace liftlab
