#include "plot_style.h"

#include <qcustomplot.h>
#include <QFileInfo>
#include <QSvgGenerator>

namespace liftlab {

namespace {
double g_pixelRatio = 1.0;
}

void setExportPixelRatio(double ratio) {
    g_pixelRatio = ratio > 0 && ratio <= 8 ? ratio : 1.0;
}

double exportPixelRatio() {
    return g_pixelRatio;
}

void applyLabStyle(QCustomPlot* plot) {
    plot->setBackground(Qt::white);
    plot->setNoAntialiasingOnDrag(true);
    for (QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        axis->grid()->setSubGridVisible(true);
        axis->grid()->setPen(QPen(QColor(200, 200, 200), 0, Qt::SolidLine));
        axis->grid()->setSubGridPen(QPen(QColor(232, 232, 232), 0, Qt::DotLine));
    }
    // A closed box reads better than two open axes.
    plot->xAxis2->setVisible(true);
    plot->yAxis2->setVisible(true);
    plot->xAxis2->setTickLabels(false);
    plot->yAxis2->setTickLabels(false);
    QObject::connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot->xAxis2,
                     qOverload<const QCPRange&>(&QCPAxis::setRange));
    QObject::connect(plot->yAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), plot->yAxis2,
                     qOverload<const QCPRange&>(&QCPAxis::setRange));
    plot->legend->setVisible(true);
    plot->legend->setBrush(QColor(255, 255, 255, 220));
    plot->legend->setBorderPen(QPen(QColor(180, 180, 180)));
    plot->legend->setIconTextPadding(9);  // SVG viewers may measure text wider than Qt does
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
}

void setPlotTitle(QCustomPlot* plot, QCPTextElement*& element, const QString& title) {
    if (title.isEmpty()) {
        if (element) {
            plot->plotLayout()->remove(element);
            plot->plotLayout()->simplify();
            element = nullptr;
        }
    } else if (!element) {
        plot->plotLayout()->insertRow(0);
        QFont f = plot->font();
        f.setBold(true);
        f.setPointSizeF(f.pointSizeF() * 1.1);
        element = new QCPTextElement(plot, title, f);
        plot->plotLayout()->addElement(0, 0, element);
    } else {
        element->setText(title);
    }
    plot->replot(QCustomPlot::rpQueuedReplot);
}

bool exportPlot(QCustomPlot* plot, const QString& path, int width, int height,
                const QString& title) {
    if (width <= 0 || height <= 0) return false;
    const QString ext = QFileInfo(path).suffix().toLower();
    bool ok = false;
    if (ext == QLatin1String("png")) {
        ok = plot->savePng(path, width, height, g_pixelRatio);
    } else if (ext == QLatin1String("pdf")) {
        ok = plot->savePdf(path, width, height);
    } else if (ext == QLatin1String("svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(QSize(width, height));
        svg.setViewBox(QRect(0, 0, width, height));
        svg.setResolution(plot->logicalDpiX());  // fonts come out the size they are on screen
        svg.setTitle(title);
        QCPPainter painter;
        ok = painter.begin(&svg);
        if (ok) {
            plot->toPainter(&painter, width, height);
            ok = painter.end();
        }
    }
    // The export laid the plot out at its size; lay it out for the widget again.
    plot->replot(QCustomPlot::rpQueuedReplot);
    return ok && QFileInfo(path).size() > 0;
}

}  // namespace liftlab
