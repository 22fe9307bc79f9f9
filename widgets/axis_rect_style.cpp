#include "axis_rect_style.h"

#include <qcustomplot.h>
#include <algorithm>

namespace liftlab {

void styleAxisRect(QCPAxisRect* rect) {
    rect->setupFullAxesBox(/*connectRanges=*/true);
    for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
        axis->grid()->setVisible(true);
        axis->grid()->setSubGridVisible(true);
        axis->grid()->setPen(QPen(QColor(200, 200, 200), 0, Qt::SolidLine));
        axis->grid()->setSubGridPen(QPen(QColor(232, 232, 232), 0, Qt::DotLine));
    }
    // Scale type and ticker changes of bottom/left are copied when they are set (see users).
}

QCPItemText* addEmptyNote(QCustomPlot* plot, QCPAxisRect* rect, const QString& text) {
    auto* note = new QCPItemText(plot);
    note->setClipAxisRect(rect);
    note->position->setAxisRect(rect);
    note->position->setType(QCPItemPosition::ptAxisRectRatio);
    note->position->setCoords(0.5, 0.5);
    note->setPositionAlignment(Qt::AlignCenter);
    note->setText(text);
    note->setColor(QColor(130, 130, 130));
    QFont f = plot->font();
    f.setItalic(true);
    note->setFont(f);
    return note;
}

void addCentredLegendRow(QCustomPlot* plot, int row, QCPLegend* legend) {
    if (legend->layout()) legend->layout()->take(legend);
    plot->plotLayout()->insertRow(row);
    // The row's grid joins the plot before it gets children, so they get the plot as parent.
    auto* grid = new QCPLayoutGrid;
    plot->plotLayout()->addElement(row, 0, grid);
    plot->plotLayout()->setRowStretchFactor(row, 0.001);
    grid->addElement(0, 0, new QCPLayoutElement(plot));
    grid->addElement(0, 1, legend);
    grid->addElement(0, 2, new QCPLayoutElement(plot));
    grid->setColumnStretchFactor(0, 1);
    grid->setColumnStretchFactor(1, 0.001);
    grid->setColumnStretchFactor(2, 1);
    grid->setMargins(QMargins(0, 0, 0, 4));
    legend->setLayer(QStringLiteral("legend"));
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
}

void fitLegendColumns(QCPLegend* legend, int width, int maxColumns) {
    QVector<int> widths;
    // itemCount() counts the cells of the grid; a partly filled last line has empty ones.
    for (int i = 0; i < legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = legend->item(i))
            widths << item->minimumOuterSizeHint().width();
    const int available = width - legend->margins().left() - legend->margins().right() - 16;
    int columns = std::max(1, std::min<int>(maxColumns, widths.size()));
    for (; columns > 1; --columns) {
        // Row-by-row filling puts entry i in column i mod columns.
        QVector<int> columnWidth(columns, 0);
        for (int i = 0; i < widths.size(); ++i)
            columnWidth[i % columns] = std::max(columnWidth[i % columns], widths[i]);
        int total = (columns - 1) * legend->columnSpacing();
        for (int w : columnWidth) total += w;
        if (total <= available) break;
    }
    if (legend->wrap() == columns && legend->fillOrder() == QCPLayoutGrid::foColumnsFirst) return;
    legend->setWrap(columns);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, /*rearrange=*/true);
}

}  // namespace liftlab
