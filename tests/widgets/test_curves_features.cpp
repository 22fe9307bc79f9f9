// LossCurvePanel research features: EMA smoothing against its formula, the crosshair readout,
// CSV export read back, the clipboard image, re-filtering on a log ↔ linear switch.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QFileInfo>
#include <QMenu>
#include <QMouseEvent>
#include <QTemporaryDir>
#include <QTextStream>
#include <cmath>
#include <limits>
#include <random>

#include "example_output.h"
#include "loss_curve_panel.h"
#include "method_colors.h"

using liftlab::LossCurvePanel;

namespace {

using liftlab::test::kNaN;
constexpr double kFeatureTol = 1e-12;

// TensorBoard's debiased EMA written out independently of the panel: finite values only.
QVector<double> debiasedEma(const QVector<double>& x, double w) {
    QVector<double> out;
    double m = 0.0;
    int k = 0;
    for (double v : x) {
        if (!std::isfinite(v)) continue;
        m = w * m + (1.0 - w) * v;
        ++k;
        out.push_back(m / (1.0 - std::pow(w, k)));
    }
    return out;
}

QVector<double> graphValues(const QCPGraph* g) {
    QVector<double> v;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
        v.push_back(it->value);
    return v;
}

QVector<double> graphKeys(const QCPGraph* g) {
    QVector<double> v;
    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) v.push_back(it->key);
    return v;
}

// Noisy training losses: a decay towards a floor with multiplicative noise, logged every 10.
void fillNoisy(LossCurvePanel& panel, const QString& method, double scale, double floor,
               unsigned seed) {
    std::mt19937 rng(seed);
    std::lognormal_distribution<double> noise(0.0, 0.35);
    QVector<double> steps, values;
    for (int i = 0; i <= 300; ++i) {
        steps << 10.0 * i;
        values << (scale * std::exp(-i / 60.0) + floor) * noise(rng);
    }
    panel.appendPoints(method, steps, values);
}

void sendMouse(QWidget* target, QEvent::Type type, const QPointF& pos) {
    QMouseEvent event(type, pos, target->mapToGlobal(pos), Qt::NoButton, Qt::NoButton,
                      Qt::NoModifier);
    QApplication::sendEvent(target, &event);
}

}  // namespace

TEST(CurvesFeatures, SmoothingIsTheDebiasedEmaOverDataBeforeAndAfterTheCall) {
    const QVector<double> steps = {0, 10, 20, 30, 40, 50, 60, 70};
    const QVector<double> values = {2.0, 1.0, kNaN, 1.5, 0.25, 0.5, 0.125, 0.3};
    const double w = 0.9;
    LossCurvePanel panel;
    EXPECT_EQ(panel.smoothing(), 0.0);
    EXPECT_EQ(panel.smoothedGraph("sgd"), nullptr);
    // Half the data before smoothing is switched on, half after.
    panel.appendPoints("sgd", steps.mid(0, 4), values.mid(0, 4));
    panel.setSmoothing(w);
    EXPECT_DOUBLE_EQ(panel.smoothing(), w);
    panel.appendPoints("sgd", steps.mid(4), values.mid(4));

    const QCPGraph* smooth = panel.smoothedGraph("sgd");
    ASSERT_NE(smooth, nullptr);
    const QVector<double> expected = debiasedEma(values, w);
    const QVector<double> got = graphValues(smooth);
    ASSERT_EQ(got.size(), expected.size());  // 7 finite values
    for (int i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], kFeatureTol) << i;
    EXPECT_EQ(graphKeys(smooth), (QVector<double>{0, 10, 30, 40, 50, 60, 70}));
    // Debiasing: the first smoothed value is the first value itself, not (1 − w)·x₁.
    EXPECT_NEAR(got.front(), 2.0, kFeatureTol);

    // Another weight recomputes from the kept raw data; 0 switches it off again.
    panel.setSmoothing(0.5);
    const QVector<double> half = debiasedEma(values, 0.5);
    const QVector<double> gotHalf = graphValues(panel.smoothedGraph("sgd"));
    ASSERT_EQ(gotHalf.size(), half.size());
    for (int i = 0; i < half.size(); ++i) EXPECT_NEAR(gotHalf[i], half[i], kFeatureTol) << i;
    panel.setSmoothing(0.0);
    EXPECT_EQ(panel.smoothedGraph("sgd"), nullptr);
    EXPECT_EQ(panel.pointCount("sgd"), 7);
    // Out-of-range weights are clamped, NaN means off.
    panel.setSmoothing(5.0);
    EXPECT_LT(panel.smoothing(), 1.0);
    panel.setSmoothing(kNaN);
    EXPECT_EQ(panel.smoothing(), 0.0);
}

TEST(CurvesFeatures, EarlierStepsAreMergedInStepOrderBeforeSmoothing) {
    LossCurvePanel panel;
    panel.setSmoothing(0.6);
    panel.appendPoints("adam", {20, 30}, {4.0, 1.0});
    panel.appendPoints("adam", {0, 10}, {8.0, 2.0});  // arrives late, belongs first
    const QVector<double> got = graphValues(panel.smoothedGraph("adam"));
    const QVector<double> expected = debiasedEma({8.0, 2.0, 4.0, 1.0}, 0.6);
    ASSERT_EQ(got.size(), 4);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], kFeatureTol) << i;
    EXPECT_EQ(graphKeys(panel.rawGraph("adam")), (QVector<double>{0, 10, 20, 30}));
}

TEST(CurvesFeatures, RawCurveStaysFaintBehindTheSmoothedOneAndBandsAreUntouched) {
    LossCurvePanel panel;
    fillNoisy(panel, "cf-prox", 1.0, 0.02, 1);
    fillNoisy(panel, "sgd", 2.0, 0.05, 2);
    panel.setBand("cf-prox", {0, 1000, 2000, 3000}, {0.5, 0.05, 0.02, 0.015},
                  {1.5, 0.2, 0.05, 0.03});
    const QCPGraph* band = nullptr;
    for (int i = 0; i < panel.plot()->graphCount(); ++i)
        if (panel.plot()->graph(i)->channelFillGraph()) band = panel.plot()->graph(i);
    ASSERT_NE(band, nullptr);
    const QVector<double> bandBefore = graphValues(band);

    panel.setSmoothing(0.9);
    for (const QString method : {"cf-prox", "sgd"}) {
        const QCPGraph* raw = panel.rawGraph(method);
        const QCPGraph* smooth = panel.smoothedGraph(method);
        ASSERT_NE(raw, nullptr);
        ASSERT_NE(smooth, nullptr);
        EXPECT_TRUE(raw->visible());
        EXPECT_EQ(raw->dataCount(), 301);
        EXPECT_EQ(panel.pointCount(method), 301);
        const QColor colour = liftlab::methodColor(method);
        EXPECT_EQ(smooth->pen().color(), colour);
        EXPECT_EQ(raw->pen().color().rgb(), colour.rgb());  // same colour …
        EXPECT_NEAR(raw->pen().color().alpha(), 60, 10);    // … but faint
        // The legend names the method once, with the smoothed curve's (full-colour) pen.
        EXPECT_NE(panel.plot()->legend->itemWithPlottable(smooth), nullptr);
        EXPECT_EQ(panel.plot()->legend->itemWithPlottable(raw), nullptr);
    }
    EXPECT_EQ(panel.plot()->legend->itemCount(), 2);
    EXPECT_EQ(panel.seriesCount(), 2);
    EXPECT_EQ(graphValues(band), bandBefore);
    // Noise is smoothed away: the EMA varies less from point to point than the raw values.
    auto roughness = [](const QVector<double>& v) {
        double sum = 0;
        for (int i = 1; i < v.size(); ++i) sum += std::abs(std::log(v[i] / v[i - 1]));
        return sum;
    };
    EXPECT_LT(roughness(graphValues(panel.smoothedGraph("sgd"))),
              0.3 * roughness(graphValues(panel.rawGraph("sgd"))));

    panel.setSmoothing(0.0);  // back to one full-colour curve per method
    EXPECT_EQ(panel.rawGraph("sgd")->pen().color(), liftlab::methodColor("sgd"));
    EXPECT_NE(panel.plot()->legend->itemWithPlottable(panel.rawGraph("sgd")), nullptr);
    EXPECT_EQ(panel.plot()->legend->itemCount(), 2);
}

TEST(CurvesFeatures, ReadoutGivesEachMethodsValueAtTheNearestStep) {
    LossCurvePanel panel;
    EXPECT_TRUE(panel.readoutAt(10).isEmpty());
    panel.appendPoints("sgd", {0, 10, 20, 30}, {1.0, 0.5, 0.25, 0.125});
    panel.appendPoints("adam", {0, 12, 24}, {0.9, kNaN, 0.3});
    panel.appendPoints("lbfgs", {0, 10}, {kNaN, kNaN});

    QStringList lines = panel.readoutAt(13).split('\n');
    ASSERT_EQ(lines.size(), 4);
    EXPECT_EQ(lines[0], "step 13");
    EXPECT_EQ(lines[1], "sgd @10: 0.5");
    EXPECT_EQ(lines[2], "adam @24: 0.3");  // 12 is nearer but NaN; 24 is the nearest finite
    EXPECT_EQ(lines[3], "lbfgs: —");
    lines = panel.readoutAt(16).split('\n');
    EXPECT_EQ(lines[1], "sgd @20: 0.25");
    EXPECT_EQ(panel.readoutAt(15).split('\n')[1], "sgd @10: 0.5");  // a tie: the earlier step
    EXPECT_EQ(panel.readoutAt(-50).split('\n')[1], "sgd @0: 1");
    EXPECT_EQ(panel.readoutAt(1e6).split('\n')[2], "adam @24: 0.3");

    panel.setSmoothing(0.5);
    const QVector<double> ema = debiasedEma({1.0, 0.5, 0.25, 0.125}, 0.5);
    lines = panel.readoutAt(21).split('\n');
    EXPECT_EQ(lines[1],
              QString("sgd @20: 0.25 (smoothed %1)").arg(QString::number(ema[2], 'g', 5)));
    EXPECT_TRUE(lines[1].contains("(smoothed 0.42857)")) << lines[1].toStdString();  // 3/7 by hand
}

TEST(CurvesFeatures, CrosshairFollowsTheMouseAndLeavesExportsAlone) {
    LossCurvePanel panel;
    panel.resize(800, 500);
    panel.show();
    fillNoisy(panel, "sgd", 2.0, 0.05, 3);
    panel.setSmoothing(0.8);
    panel.rescale();
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    ASSERT_TRUE(panel.exportTo(dir.filePath("before.png"), 700, 450));
    QCustomPlot* plot = panel.plot();
    plot->replot(QCustomPlot::rpImmediateRefresh);  // laid out for the widget again
    const QRect rect = plot->axisRect()->rect();
    ASSERT_GT(rect.width(), 100);

    const QPoint at(qRound(plot->xAxis->coordToPixel(1200)), rect.center().y());
    sendMouse(plot, QEvent::MouseMove, at);
    ASSERT_TRUE(panel.crosshairVisible());
    EXPECT_EQ(panel.crosshairText(), panel.readoutAt(plot->xAxis->pixelToCoord(at.x())));
    EXPECT_TRUE(panel.crosshairText().contains("sgd @1200: "))
        << panel.crosshairText().toStdString();
    EXPECT_TRUE(panel.crosshairText().contains("smoothed"));

    // A figure exported while the mouse is over the plot has no crosshair in it.
    ASSERT_TRUE(panel.exportTo(dir.filePath("hover.png"), 700, 450));
    EXPECT_EQ(QImage(dir.filePath("hover.png")), QImage(dir.filePath("before.png")));
    EXPECT_TRUE(panel.crosshairVisible());  // and it is back on screen afterwards
    // A pinned one is part of the figure.
    panel.showCrosshairAt(1200);
    ASSERT_TRUE(panel.exportTo(dir.filePath("pinned.png"), 700, 450));
    EXPECT_NE(QImage(dir.filePath("pinned.png")), QImage(dir.filePath("before.png")));

    // Outside the axis rect or after leaving the widget the (unpinned) crosshair goes away.
    sendMouse(plot, QEvent::MouseMove, at);
    sendMouse(plot, QEvent::MouseMove, QPointF(2, 2));
    EXPECT_FALSE(panel.crosshairVisible());
    sendMouse(plot, QEvent::MouseMove, at);
    EXPECT_TRUE(panel.crosshairVisible());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(plot, &leave);
    EXPECT_FALSE(panel.crosshairVisible());
    EXPECT_TRUE(panel.crosshairText().isEmpty());

    panel.setCrosshairEnabled(false);
    sendMouse(plot, QEvent::MouseMove, at);
    EXPECT_FALSE(panel.crosshairVisible());
}

TEST(CurvesFeatures, CsvExportReadsBackEveryRawValue) {
    LossCurvePanel panel;
    panel.appendPoints("sgd", {0, 10, 20, 30}, {1.0, 0.1, kNaN, 1.0 / 3.0});
    panel.appendPoints("cf,prox", {0, 10}, {0.7, -0.5});  // a comma in the label, a negative value
    panel.setBand("sgd", {10, 20, 40}, {0.05, 0.04, 0.01}, {0.2, 0.15, 0.1});
    panel.setSmoothing(0.9);

    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString path = dir.filePath("curves.csv");
    ASSERT_TRUE(panel.exportCsv(path));
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QTextStream(&file).readAll().split('\n', Qt::SkipEmptyParts);
    file.close();
    ASSERT_EQ(lines.size(), 1 + 5 + 2);  // header, sgd (4 points + the band-only step 40), cf,prox
    EXPECT_EQ(lines[0], "method,step,value,smoothed,band_lo,band_hi");

    const QVector<double> ema = debiasedEma({1.0, 0.1, kNaN, 1.0 / 3.0}, 0.9);
    struct Expect {
        double step;
        QString value;
        double smoothed;
        QString lo, hi;
    };
    const Expect sgd[] = {{0, "1", ema[0], "", ""},
                          {10, "0.1", ema[1], "0.05", "0.2"},
                          {20, "nan", kNaN, "0.04", "0.15"},
                          {30, "", ema[2], "", ""},
                          {40, "", kNaN, "0.01", "0.1"}};
    for (int r = 0; r < 5; ++r) {
        const QStringList f = lines[1 + r].split(',');
        ASSERT_EQ(f.size(), 6) << lines[1 + r].toStdString();
        EXPECT_EQ(f[0], "sgd");
        EXPECT_EQ(f[1].toDouble(), sgd[r].step);
        if (r == 3) {
            EXPECT_EQ(f[2].toDouble(), 1.0 / 3.0);  // exact round trip, not 0.333333
        } else {
            EXPECT_EQ(f[2], sgd[r].value);
        }
        if (std::isnan(sgd[r].smoothed)) {
            EXPECT_TRUE(f[3].isEmpty()) << r;
        } else {
            EXPECT_EQ(f[3].toDouble(), sgd[r].smoothed) << r;
        }
        EXPECT_EQ(f[4], sgd[r].lo) << r;
        EXPECT_EQ(f[5], sgd[r].hi) << r;
    }
    // A method label with a comma is quoted, and it has no band: empty band cells.
    EXPECT_TRUE(lines[6].startsWith("\"cf,prox\",0,0.7,")) << lines[6].toStdString();
    EXPECT_TRUE(lines[7].startsWith("\"cf,prox\",10,-0.5,")) << lines[7].toStdString();
    EXPECT_TRUE(lines[7].endsWith(",,"));

    // Without smoothing or bands the columns go away.
    LossCurvePanel plain;
    plain.appendPoints("adam", {5}, {0.25});
    ASSERT_TRUE(plain.exportCsv(path));
    ASSERT_TRUE(file.open(QIODevice::ReadOnly | QIODevice::Text));
    EXPECT_EQ(QString(file.readAll()), "method,step,value\nadam,5,0.25\n");
    EXPECT_FALSE(plain.exportCsv(dir.filePath("no/such/dir/curves.csv")));
}

TEST(CurvesFeatures, CopiesARenderingToTheClipboard) {
    LossCurvePanel panel;
    panel.setMetric("test_loss");
    fillNoisy(panel, "sgd", 2.0, 0.05, 4);
    panel.rescale();
    QGuiApplication::clipboard()->clear();
    panel.copyToClipboard(640, 400);
    const QImage image = QGuiApplication::clipboard()->image();
    ASSERT_FALSE(image.isNull());
    EXPECT_EQ(image.size(), QSize(640, 400));
    // Not a blank page: the curve's colour is somewhere in it.
    const QRgb curve = liftlab::methodColor("sgd").rgb();
    bool found = false;
    for (int y = 0; y < image.height() && !found; ++y)
        for (int x = 0; x < image.width() && !found; ++x) found = image.pixel(x, y) == curve;
    EXPECT_TRUE(found);
}

TEST(CurvesFeatures, SwitchingToLinearAfterTheDataShowsNonPositivePointsAgain) {
    LossCurvePanel panel;
    panel.setLogY(true);
    panel.appendPoints("adam", {1, 2, 3, 4, 5, 6}, {0.5, kNaN, 0.0, -1.0, 0.25, 0.1});
    panel.setBand("adam", {1, 2, 3}, {-0.5, 0.1, 0.05}, {1.0, 0.6, 0.4});
    panel.setSmoothing(0.5);
    EXPECT_EQ(panel.pointCount("adam"), 3);  // 0.5, 0.25, 0.1

    panel.setLogY(false);
    EXPECT_EQ(panel.pointCount("adam"), 5);  // 0 and −1 are back; NaN never is
    EXPECT_EQ(panel.smoothedGraph("adam")->dataCount(), 5);
    EXPECT_LE(panel.plot()->yAxis->range().lower, -1.0);  // the axis follows them down
    const QCPGraph* band = nullptr;
    for (int i = 0; i < panel.plot()->graphCount(); ++i)
        if (panel.plot()->graph(i)->channelFillGraph()) band = panel.plot()->graph(i);
    ASSERT_NE(band, nullptr);
    EXPECT_EQ(band->dataCount(), 3);

    panel.setLogY(true);  // and back
    EXPECT_EQ(panel.pointCount("adam"), 3);
    EXPECT_EQ(band->dataCount(), 2);
    EXPECT_GT(panel.plot()->yAxis->range().lower, 0.0);
}

TEST(CurvesFeatures, ContextMenuDrivesSmoothingAndTheAxis) {
    LossCurvePanel panel;
    panel.appendPoints("sgd", {0, 10}, {1.0, 0.5});
    QMenu* menu = panel.createContextMenu(&panel);
    QAction* smooth09 = nullptr;
    QAction* log = nullptr;
    for (QAction* a : menu->actions()) {
        if (a->text() == "Log y axis") log = a;
        if (a->menu())
            for (QAction* b : a->menu()->actions())
                if (b->data().toDouble() == 0.9) smooth09 = b;
    }
    ASSERT_NE(smooth09, nullptr);
    ASSERT_NE(log, nullptr);
    EXPECT_TRUE(log->isChecked());
    smooth09->trigger();
    EXPECT_DOUBLE_EQ(panel.smoothing(), 0.9);
    log->trigger();
    EXPECT_FALSE(panel.logY());
    delete menu;
}

TEST(CurvesFeatures, ExportsAFigureWithSmoothingAndAPinnedCrosshair) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    LossCurvePanel panel;
    panel.setTitle("Noisy losses, EMA 0.9");
    panel.setMetric("train_loss");
    fillNoisy(panel, "sgd", 2.0, 0.05, 5);
    fillNoisy(panel, "adam", 1.2, 0.02, 6);
    fillNoisy(panel, "cf-prox", 0.8, 0.004, 7);
    panel.setBand("cf-prox", {0, 1000, 2000, 3000}, {0.4, 0.02, 0.004, 0.003},
                  {1.2, 0.06, 0.01, 0.006});
    panel.setSmoothing(0.9);
    panel.rescale();
    panel.showCrosshairAt(1400);
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("smoothed.") + ext);
        EXPECT_TRUE(panel.exportTo(path, 900, 560)) << ext;
        EXPECT_GT(QFileInfo(path).size(), 5 * 1024) << ext;
    }
    liftlab::test::saveExample(panel, "curves_smoothed_crosshair.png", 900, 560);
    panel.hideCrosshair();
    liftlab::test::saveExample(panel, "curves_smoothed.png", 900, 560);
    panel.setSmoothing(0.0);
    liftlab::test::saveExample(panel, "curves_raw.png", 900, 560);
}
