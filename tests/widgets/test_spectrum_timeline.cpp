// SpectrumTimeline: κ and effective rank against hand-worked values, the slider over the union of
// steps, following live data only from the end, playing through the steps, the readout, export.
#include <gtest/gtest.h>
#include <qcustomplot.h>
#include <QFileInfo>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <cmath>
#include <limits>

#include "example_output.h"
#include "spectrum_panel.h"
#include "spectrum_timeline.h"

using liftlab::SpectrumTimeline;

namespace {

constexpr double kTol = 1e-12;
using liftlab::test::kInf;
using liftlab::test::kNaN;

// A spectrum decaying like σ_i = top · i^(−power), as features do while they specialise.
QVector<double> powerLaw(int n, double top, double power) {
    QVector<double> sv;
    for (int i = 1; i <= n; ++i) sv << top * std::pow(i, -power);
    return sv;
}

}  // namespace

TEST(SpectrumTimeline, ConditionNumberAndEffectiveRankMatchHandComputedValues) {
    // σ = {4, 2, 1, 1}: κ = 4 / 1. Σσ = 8, p = {1/2, 1/4, 1/8, 1/8},
    // H = ½ ln 2 + ¼ ln 4 + 2 · ⅛ ln 8 = (½ + ½ + ¾) ln 2 = 1.75 ln 2, exp(H) = 2^1.75.
    const QVector<double> sv = {4, 2, 1, 1};
    EXPECT_NEAR(SpectrumTimeline::conditionNumber(sv), 4.0, kTol);
    EXPECT_NEAR(SpectrumTimeline::effectiveRank(sv), std::pow(2.0, 1.75), kTol);
    EXPECT_NEAR(std::pow(2.0, 1.75), 3.363585661014858, kTol);

    // A flat spectrum has full effective rank and κ = 1; a single direction has rank 1.
    EXPECT_NEAR(SpectrumTimeline::effectiveRank({2, 2, 2, 2, 2}), 5.0, kTol);
    EXPECT_NEAR(SpectrumTimeline::conditionNumber({2, 2, 2, 2, 2}), 1.0, kTol);
    EXPECT_NEAR(SpectrumTimeline::effectiveRank({7}), 1.0, kTol);
    EXPECT_NEAR(SpectrumTimeline::conditionNumber({7}), 1.0, kTol);

    // Round-off zeros (≤ 1e-12 σ_max) do not count for κ; NaN, inf, negatives and 0 for neither.
    // σ = {3, 1} → κ = 3, p = {¾, ¼}, exp(H) = exp(−¾ ln ¾ − ¼ ln ¼) = 4 / 3^¾.
    const QVector<double> messy = {3, kNaN, 1, 0, 1e-14, -2, kInf};
    EXPECT_NEAR(SpectrumTimeline::conditionNumber(messy), 3.0, kTol);
    EXPECT_NEAR(SpectrumTimeline::effectiveRank(messy), 4.0 / std::pow(3.0, 0.75), 1e-12);
    // … but a small σ above the threshold does: κ = 3 / 1e-9.
    EXPECT_NEAR(SpectrumTimeline::conditionNumber({3, 1, 1e-9}) / 3e9, 1.0, kTol);

    EXPECT_TRUE(std::isnan(SpectrumTimeline::conditionNumber({})));
    EXPECT_TRUE(std::isnan(SpectrumTimeline::effectiveRank({})));
    EXPECT_TRUE(std::isnan(SpectrumTimeline::conditionNumber({0, kNaN})));
    EXPECT_TRUE(std::isnan(SpectrumTimeline::effectiveRank({0, -1})));
}

TEST(SpectrumTimeline, SliderSpansTheUnionOfStepsAndFollowsLiveDataOnlyFromTheEnd) {
    SpectrumTimeline timeline;
    EXPECT_EQ(timeline.shownStep(), -1);
    EXPECT_FALSE(timeline.slider()->isEnabled());
    timeline.addSpectrum("sgd", 0, powerLaw(8, 2, 0.5));
    timeline.addSpectrum("sgd", 20, powerLaw(8, 2, 1.0));
    timeline.addSpectrum("adam", 10, powerLaw(8, 3, 0.7));
    timeline.addSpectrum("adam", 20, powerLaw(8, 3, 1.2));
    EXPECT_EQ(timeline.steps(), (QVector<int>{0, 10, 20}));
    EXPECT_EQ(timeline.slider()->minimum(), 0);
    EXPECT_EQ(timeline.slider()->maximum(), 2);
    EXPECT_TRUE(timeline.slider()->isEnabled());
    // Live: every new step moved the view to the end.
    EXPECT_EQ(timeline.shownStep(), 20);
    EXPECT_TRUE(timeline.live());
    timeline.addSpectrum("sgd", 30, powerLaw(8, 2, 1.4));
    EXPECT_EQ(timeline.slider()->maximum(), 3);
    EXPECT_EQ(timeline.slider()->value(), 3);
    EXPECT_EQ(timeline.shownStep(), 30);
    EXPECT_EQ(timeline.spectrumPanel()->displayedStep("adam"), 20);  // its latest before 30

    // Scrubbed back, new data extends the slider but the view stays where the user put it.
    timeline.slider()->setValue(1);
    EXPECT_EQ(timeline.shownStep(), 10);
    EXPECT_FALSE(timeline.live());
    EXPECT_EQ(timeline.spectrumPanel()->displayedStep("sgd"), 0);
    timeline.addSpectrum("sgd", 40, powerLaw(8, 2, 1.5));
    EXPECT_EQ(timeline.slider()->maximum(), 4);
    EXPECT_EQ(timeline.shownStep(), 10);
    EXPECT_EQ(timeline.slider()->value(), 1);
    // A step recorded before the shown one shifts its index; the view keeps the same step.
    timeline.addSpectrum("adam", 5, powerLaw(8, 3, 0.6));
    EXPECT_EQ(timeline.steps(), (QVector<int>{0, 5, 10, 20, 30, 40}));
    EXPECT_EQ(timeline.slider()->value(), 2);
    EXPECT_EQ(timeline.shownStep(), 10);

    // Back at the end, it follows again.
    timeline.slider()->setValue(timeline.slider()->maximum());
    EXPECT_TRUE(timeline.live());
    timeline.addSpectrum("adam", 50, powerLaw(8, 3, 1.5));
    EXPECT_EQ(timeline.shownStep(), 50);

    // showStep snaps to the latest recorded step at or before the one asked for.
    timeline.showStep(27);
    EXPECT_EQ(timeline.shownStep(), 20);
    EXPECT_EQ(timeline.slider()->value(), 3);
    timeline.showStep(-100);
    EXPECT_EQ(timeline.shownStep(), 0);

    timeline.clear();
    EXPECT_EQ(timeline.shownStep(), -1);
    EXPECT_TRUE(timeline.steps().isEmpty());
    EXPECT_EQ(timeline.spectrumPanel()->methodCount(), 0);
    EXPECT_EQ(timeline.readoutText(), "no spectra recorded");
    timeline.addSpectrum("sgd", 7, {1, 0.5});
    EXPECT_EQ(timeline.shownStep(), 7);  // live again after a clear
}

TEST(SpectrumTimeline, PlayAdvancesThroughEveryStepAndStopsAtTheEnd) {
    SpectrumTimeline timeline;
    for (int step : {0, 10, 20, 30}) timeline.addSpectrum("sgd", step, powerLaw(6, 1, 0.1 * step));
    timeline.showStep(0);
    EXPECT_TRUE(timeline.playButton()->isEnabled());
    QSignalSpy shown(&timeline, &SpectrumTimeline::stepShown);
    QSignalSpy playingSpy(&timeline, &SpectrumTimeline::playingChanged);
    timeline.play();
    EXPECT_TRUE(timeline.playing());
    EXPECT_EQ(timeline.playButton()->text(), "Pause");
    // 3 steps at ~8 per second take ~0.4 s; the timeout only guards a stuck timer.
    ASSERT_TRUE(QTest::qWaitFor([&] { return !timeline.playing(); }, 5000));
    EXPECT_EQ(timeline.shownStep(), 30);
    ASSERT_EQ(shown.count(), 3);
    EXPECT_EQ(shown[0][0].toInt(), 10);
    EXPECT_EQ(shown[1][0].toInt(), 20);
    EXPECT_EQ(shown[2][0].toInt(), 30);
    EXPECT_EQ(playingSpy.count(), 2);  // started, stopped
    EXPECT_EQ(timeline.playButton()->text(), "Play");

    // Play at the end starts over from the first step; the timer slot can be driven directly.
    timeline.play();
    EXPECT_EQ(timeline.shownStep(), 0);
    timeline.pause();
    EXPECT_FALSE(timeline.playing());
    timeline.stepForward();
    EXPECT_EQ(timeline.shownStep(), 10);
    timeline.play();
    timeline.stepForward();
    timeline.stepForward();
    EXPECT_EQ(timeline.shownStep(), 30);
    EXPECT_FALSE(timeline.playing());  // reaching the end stops it
    timeline.stepForward();            // harmless at the end
    EXPECT_EQ(timeline.shownStep(), 30);

    // A single step has nothing to play.
    SpectrumTimeline single;
    single.addSpectrum("sgd", 5, {1, 2});
    single.play();
    EXPECT_FALSE(single.playing());
    EXPECT_FALSE(single.playButton()->isEnabled());
}

TEST(SpectrumTimeline, ReadoutListsEveryMethodAtTheShownStep) {
    SpectrumTimeline timeline;
    timeline.addSpectrum("sgd", 0, {4, 2, 1, 1});
    timeline.addSpectrum("sgd", 100, {8, 1, 0.5, 0.5});
    timeline.addSpectrum("adam", 0, {1, 1, 1, 1});
    timeline.addSpectrum("cf-prox", 100, {5, kNaN, 1e-20, 0});  // one usable direction
    timeline.showStep(0);
    const QStringList lines = timeline.readoutText().split('\n');
    ASSERT_EQ(lines.size(), 3);
    // Legend (sorted) order: adam, cf-prox, sgd.
    EXPECT_EQ(lines[0], "adam @ step 0: κ = 1, effective rank 4.00 of 4");
    EXPECT_EQ(lines[1], "cf-prox @ step 100: κ = 1, effective rank 1.00 of 2");  // starts later
    EXPECT_EQ(lines[2], "sgd @ step 0: κ = 4, effective rank 3.36 of 4");
    timeline.showStep(100);
    EXPECT_TRUE(timeline.readoutText().contains("sgd @ step 100: κ = 16, effective rank"));
    EXPECT_TRUE(timeline.readoutText().contains("adam @ step 0:"));  // its latest before 100

    // No usable value at all: a dash, no crash.
    timeline.addSpectrum("lbfgs", 100, {kNaN, 0});
    EXPECT_TRUE(timeline.readoutText().contains("lbfgs @ step 100: κ = —, effective rank — of 0"))
        << timeline.readoutText().toStdString();
}

TEST(SpectrumTimeline, ExportsThePlot) {
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    SpectrumTimeline timeline;
    timeline.spectrumPanel()->setTitle("Feature spectrum over training");
    for (int step = 0; step <= 1000; step += 100) {
        timeline.addSpectrum("sgd", step, powerLaw(32, 3, 0.2 + 0.001 * step));
        timeline.addSpectrum("cf-prox", step, powerLaw(32, 2, 0.3 + 0.0004 * step));
    }
    timeline.showStep(600);
    EXPECT_EQ(timeline.spectrumPanel()->curveCount(), 2);
    for (const char* ext : {"png", "svg", "pdf"}) {
        const QString path = dir.filePath(QStringLiteral("timeline.") + ext);
        EXPECT_TRUE(timeline.exportTo(path, 800, 500)) << ext;
        EXPECT_GT(QFileInfo(path).size(), 5 * 1024) << ext;
    }
    EXPECT_FALSE(timeline.exportTo(dir.filePath("timeline.png"), 0, 500));
    liftlab::test::saveExample(timeline, "spectrum_timeline.png", 800, 500);
    // The whole widget (plot, slider, readout) for a look.
    const QString examples = qEnvironmentVariable("LIFTLAB_WIDGET_EXAMPLES");
    if (!examples.isEmpty()) {
        timeline.resize(800, 560);
        timeline.show();
        timeline.grab().save(examples + "/spectrum_timeline_widget.png");
    }
}
