// PlotPanel, the base of every panel: an empty legend is not drawn as an empty box, the
// empty-plot note wraps to the plot's width, and a panel on a hidden tab keeps its queued replots
// until the tab is shown.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QApplication>
#include <QTabWidget>

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

// A panel on a tab that is not shown keeps its queued replots (how live updates ask for one) and
// draws once when its tab is shown; a shown panel, and a panel in no shown window, draw at once.
TEST(PlotPanel, AHiddenTabsQueuedReplotWaitsUntilTheTabIsShown) {
    QTabWidget window;
    auto* shown = new OneGraphPanel;
    auto* hidden = new OneGraphPanel;
    window.addTab(shown, QStringLiteral("shown"));
    window.addTab(hidden, QStringLiteral("hidden"));
    window.resize(400, 300);
    window.show();
    QApplication::processEvents();
    int shownReplots = 0, hiddenReplots = 0;
    QObject::connect(shown->plot(), &QCustomPlot::afterReplot, [&] { ++shownReplots; });
    QObject::connect(hidden->plot(), &QCustomPlot::afterReplot, [&] { ++hiddenReplots; });

    for (int i = 0; i < 3; ++i) {  // three live updates on each
        shown->graph_->addData(i, i);
        hidden->graph_->addData(i, i);
        shown->plot()->replot(QCustomPlot::rpQueuedReplot);
        hidden->plot()->replot(QCustomPlot::rpQueuedReplot);
        QApplication::processEvents();
    }
    EXPECT_EQ(shownReplots, 3);
    EXPECT_EQ(hiddenReplots, 0);

    window.setCurrentIndex(1);  // its tab shown: one replot, with every point
    QApplication::processEvents();
    EXPECT_EQ(hiddenReplots, 1);
    EXPECT_EQ(hidden->graph_->dataCount(), 3);
    hidden->graph_->addData(3, 3);  // and it draws at once from now on
    hidden->plot()->replot(QCustomPlot::rpQueuedReplot);
    QApplication::processEvents();
    EXPECT_EQ(hiddenReplots, 2);

    // Hidden again, then shown again (no first-show resize this time): one replot.
    window.setCurrentIndex(0);
    QApplication::processEvents();
    hidden->graph_->addData(4, 4);
    hidden->plot()->replot(QCustomPlot::rpQueuedReplot);
    QApplication::processEvents();
    EXPECT_EQ(hiddenReplots, 2);
    window.setCurrentIndex(1);
    QApplication::processEvents();
    EXPECT_EQ(hiddenReplots, 3);

    // A direct replot draws even while hidden (exports, tests), and so does a panel that is in
    // no shown window.
    window.setCurrentIndex(0);
    QApplication::processEvents();
    const int before = shownReplots;
    hidden->plot()->replot();
    EXPECT_EQ(hiddenReplots, 4);
    OneGraphPanel alone;
    int aloneReplots = 0;
    QObject::connect(alone.plot(), &QCustomPlot::afterReplot, [&] { ++aloneReplots; });
    alone.plot()->replot(QCustomPlot::rpQueuedReplot);
    QApplication::processEvents();
    EXPECT_EQ(aloneReplots, 1);
    EXPECT_EQ(shownReplots, before);
}
