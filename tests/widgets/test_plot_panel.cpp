// PlotPanel, the base of every panel: an empty legend is not drawn as an empty box, and the
// empty-plot note wraps to the plot's width.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QApplication>

#include "plot_panel.h"

namespace {

// The smallest concrete panel: one graph, named in the legend only when asked.
class OneGraphPanel : public liftlab::PlotPanel {
public:
    OneGraphPanel() : PlotPanel(nullptr, QSize(200, 150)) {
        graph_ = plot_->addGraph();
        graph_->removeFromLegend();
        plot_->legend->setVisible(true);
    }
    void clear() override { graph_->data()->clear(); }
    QCPGraph* graph_ = nullptr;
};

QCPItemText* note(QCustomPlot* plot) {
    for (int i = 0; i < plot->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) return text;
    return nullptr;
}

}  // namespace

TEST(PlotPanel, AnEmptyLegendIsHiddenAndComesBackWithItsFirstEntry) {
    OneGraphPanel panel;
    QCustomPlot* plot = panel.plot();
    plot->replot();
    EXPECT_FALSE(plot->legend->visible());  // nothing named: no empty box
    panel.graph_->setName(QStringLiteral("lifter"));
    panel.graph_->addToLegend();
    plot->replot();
    EXPECT_TRUE(plot->legend->visible());
    // A legend the panel itself hid stays hidden.
    plot->legend->setVisible(false);
    plot->replot();
    EXPECT_FALSE(plot->legend->visible());
}

TEST(PlotPanel, EmptyNoteWrapsToTheNarrowPlotAndShowsOnlyWithoutData) {
    OneGraphPanel panel;
    panel.resize(220, 200);
    panel.show();  // laid out: the plot takes the panel's size
    const QString text =
        QStringLiteral("no one-step gain logged (set diagnostics.one_step_every in the spec)");
    QApplication::processEvents();
    panel.setEmptyNote(text);
    panel.plot()->replot();
    QCPItemText* item = note(panel.plot());
    ASSERT_NE(item, nullptr);
    EXPECT_TRUE(item->visible());
    EXPECT_TRUE(item->text().contains(QLatin1Char('\n'))) << item->text().toStdString();
    EXPECT_EQ(QString(item->text()).replace(QLatin1Char('\n'), QLatin1Char(' ')), text);
    const QFontMetrics metrics(item->font());
    for (const QString& line : item->text().split(QLatin1Char('\n')))
        EXPECT_LE(metrics.horizontalAdvance(line), panel.plot()->axisRect()->width())
            << line.toStdString();
    panel.resize(2000, 600);  // wide enough: one line again
    QApplication::processEvents();
    panel.plot()->replot();
    EXPECT_EQ(item->text(), text);
    panel.graph_->addData(1.0, 2.0);
    panel.plot()->replot();
    EXPECT_FALSE(item->visible());
}
