// ClaimsPanel: one bar per claim at −log10 p, coloured by verdict, and the table below it.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QFontMetrics>
#include <QHeaderView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <cmath>

#include "claims_panel.h"

using liftlab::ClaimsPanel;

namespace {

ClaimsPanel::Row claimRow(const char* id, const char* verdict, double p, const char* tuned = "") {
    ClaimsPanel::Row r;
    r.id = QString::fromLatin1(id);
    r.claim = QStringLiteral("claim ") + r.id;
    r.ours = QStringLiteral("a 0.01 ± 0.003 vs b 0.1 ± 0.02");
    r.seeds = QStringLiteral("3 / 3");
    r.test = QStringLiteral("Welch t");
    r.verdict = QString::fromLatin1(verdict);
    r.tunedVerdict = QString::fromLatin1(tuned);
    r.p = p;
    return r;
}

}  // namespace

TEST(ClaimsPanel, OneBarPerClaimInItsVerdictsSeries) {
    ClaimsPanel panel;
    panel.setRows({claimRow("a", "holds", 1e-4, "holds"), claimRow("b", "refuted", 0.3),
                   claimRow("c", "inconclusive", 0.2), claimRow("d", "not run", NAN),
                   claimRow("e", "holds", 0.01)});
    ASSERT_EQ(panel.rowCount(), 5);
    QCustomPlot* plot = panel.plot();
    ASSERT_EQ(plot->plottableCount(), 4);  // holds, refuted, inconclusive, not run
    auto bars = [&](int i) { return qobject_cast<QCPBars*>(plot->plottable(i)); };
    ASSERT_EQ(bars(0)->data()->size(), 2);  // holds: a and e
    EXPECT_DOUBLE_EQ(bars(0)->data()->at(0)->key, 0);
    EXPECT_NEAR(bars(0)->data()->at(0)->value, 4.0, 1e-12);  // −log10 1e-4
    EXPECT_NEAR(bars(0)->data()->at(1)->value, 2.0, 1e-12);
    EXPECT_EQ(bars(1)->data()->size(), 1);
    EXPECT_EQ(bars(2)->data()->size(), 1);
    EXPECT_EQ(bars(3)->data()->size(), 1);  // no p: a stub bar keeps its slot
    EXPECT_GE(plot->yAxis->range().upper, 4.0);
    // The table: one row per claim, the verdict and the tuned verdict in their columns.
    const QTableWidget* t = panel.table();
    ASSERT_EQ(t->rowCount(), 5);
    EXPECT_EQ(t->item(0, 5)->text(), QStringLiteral("holds"));
    EXPECT_EQ(t->item(0, 6)->text(), QStringLiteral("holds"));
    EXPECT_EQ(t->item(1, 6)->text(), QStringLiteral("–"));
    EXPECT_EQ(t->item(3, 4)->text(), QStringLiteral("–"));  // no p
}

TEST(ClaimsPanel, ClearsAndExports) {
    ClaimsPanel panel;
    panel.setRows({claimRow("a", "holds", 1e-3)});
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("claims.png"));
    ASSERT_TRUE(panel.exportTo(png, 800, 500));
    EXPECT_GT(QFileInfo(png).size(), 2000);
    panel.clear();
    EXPECT_EQ(panel.rowCount(), 0);
    EXPECT_EQ(panel.table()->rowCount(), 0);
}

// Every claim has a visible bar in its verdict's colour, also a refuted one-sided claim whose p is
// near 1 (−log10 p ≈ 0) and a claim without a p; and the last claims' rotated labels fit: the axis
// rect leaves them room on the right (they were not drawn at all before).
TEST(ClaimsPanel, EveryClaimHasAVisibleBarAndItsLabelRoom) {
    ClaimsPanel panel;
    panel.setRows({claimRow("first", "holds", 1e-8), claimRow("wrong-way", "refuted", 0.978),
                   claimRow("no-p", "not run", NAN),
                   claimRow("a-rather-long-claim-identifier-at-the-end", "holds", 0.01)});
    QCustomPlot* plot = panel.plot();
    auto bars = [&](int i) { return qobject_cast<QCPBars*>(plot->plottable(i)); };
    const double top = plot->yAxis->range().upper;
    ASSERT_EQ(bars(1)->data()->size(), 1);  // refuted
    EXPECT_GE(bars(1)->data()->at(0)->value, 0.015 * top);
    EXPECT_GE(bars(3)->data()->at(0)->value, 0.015 * top);   // not run
    EXPECT_NEAR(bars(0)->data()->at(0)->value, 8.0, 1e-12);  // a real height is left as it is
    const QFontMetrics metrics(plot->xAxis->tickLabelFont());
    const int label =
        metrics.horizontalAdvance(QStringLiteral("a-rather-long-claim-identifier-at-the-end"));
    EXPECT_GE(plot->axisRect()->margins().right(), int(label * std::cos(35 * M_PI / 180.0)));
    // The table's last header is not clipped at the default width.
    panel.resize(900, 600);
    const QHeaderView* header = panel.table()->horizontalHeader();
    const int last = header->count() - 1;
    const QString text = panel.table()->horizontalHeaderItem(last)->text();
    EXPECT_GE(header->sectionSize(last), QFontMetrics(header->font()).horizontalAdvance(text))
        << text.toStdString();
}
