#include "curve_markers.h"

#include <qcustomplot.h>
#include <limits>

namespace liftlab {

void CurveMarkers::clear() {
    for (QCPItemText* t : std::as_const(texts_)) plot_->removeItem(t);
    for (QCPItemLine* l : std::as_const(lines_)) plot_->removeItem(l);
    texts_.clear();
    lines_.clear();
}

void CurveMarkers::set(const QVector<CurveMarker>& markers,
                       const std::function<QColor(const QString&)>& colourOf) {
    clear();
    // Labels of markers at the same step would overprint: each next label one line lower.
    int row = 0;
    double lastStep = std::numeric_limits<double>::quiet_NaN();
    for (const CurveMarker& m : markers) {
        const QColor colour = m.colour.isValid() ? m.colour : colourOf(m.method);
        auto* line = new QCPItemLine(plot_);
        line->setPen(m.solid ? QPen(colour, 1.6, Qt::SolidLine) : QPen(colour, 1.2, Qt::DashLine));
        for (QCPItemPosition* p : {line->start, line->end}) {
            p->setAxes(plot_->xAxis, plot_->yAxis);
            p->setAxisRect(plot_->axisRect());
            p->setTypeX(QCPItemPosition::ptPlotCoords);
            p->setTypeY(QCPItemPosition::ptAxisRectRatio);
        }
        line->start->setCoords(m.step, 0.0);
        line->end->setCoords(m.step, 1.0);
        row = m.step == lastStep ? row + 1 : 0;
        lastStep = m.step;
        auto* text = new QCPItemText(plot_);
        text->position->setParentAnchor(line->start);
        text->position->setCoords(4, 4 + 16 * row);  // pixels right of and below the line top
        text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
        text->setText(m.label);
        text->setColor(colour);
        text->setBrush(QColor(255, 255, 255, 200));
        text->setPadding(QMargins(2, 1, 2, 1));
        lines_ << line;
        texts_ << text;
    }
}

QStringList CurveMarkers::labels() const {
    QStringList out;
    for (const QCPItemText* t : texts_) out << t->text();
    return out;
}

QColor CurveMarkers::colour(int i) const {
    return i >= 0 && i < lines_.size() ? lines_[i]->pen().color() : QColor();
}

double CurveMarkers::step(int i) const {
    return i >= 0 && i < lines_.size() ? lines_[i]->start->coords().x()
                                       : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace liftlab
