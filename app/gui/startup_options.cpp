#include "startup_options.h"

#include <QApplication>
#include <QCommandLineParser>

#include "run_view.h"

namespace liftlab {

namespace {

// What LiftLab does, then every tab with what it shows (--tab takes the key).
QString startupDescription() {
    QString tabs;
    for (const auto& t : RunView::tabInfos())
        tabs += QStringLiteral("\n  %1  %2: %3").arg(t.key, -9).arg(t.title, t.tip);
    return QStringLiteral(
               "LiftLab: compare training methods, live, in two families:\n"
               "  closed-form last layers (cf-ridge, cf-prox, cf-rls, cf-full) against "
               "gradient-trained ones (sgd, adam), on a backbone + last-layer task;\n"
               "  the ICNN energy model's positivity strategies (the lifter and its "
               "ablations, softplus, pgd) and CP-Flow, on a density task.\n"
               "`liftlab-cli list` names every preset, method and task kind. F1 in the "
               "window opens the user guide; every form field's tooltip names its spec "
               "key and default.\n\nTabs (--tab KEY):") +
           tabs;
}

}  // namespace

StartupOptions parseStartupOptions(const QApplication& app) {
    QCommandLineParser parser;
    parser.setApplicationDescription(startupDescription());
    parser.addHelpOption();
    parser.addVersionOption();
    QStringList tabKeys;
    for (const auto& t : RunView::tabInfos()) tabKeys << t.key;
    const QCommandLineOption preset(QStringLiteral("preset"),
                                    QStringLiteral("Built-in preset to load."),
                                    QStringLiteral("NAME"));
    const QCommandLineOption autostart(QStringLiteral("autostart"),
                                       QStringLiteral("Start the run at once."));
    const QCommandLineOption screenshot(
        QStringLiteral("screenshot"),
        QStringLiteral("Save a picture of the window to FILE when the run ends (or after 2 s "
                       "without --autostart)."),
        QStringLiteral("FILE"));
    const QCommandLineOption quit(QStringLiteral("quit-when-done"),
                                  QStringLiteral("Quit when the run (and screenshot) is done."));
    const QCommandLineOption steps(QStringLiteral("steps"),
                                   QStringLiteral("Training steps (overrides the preset)."),
                                   QStringLiteral("N"));
    const QCommandLineOption out(QStringLiteral("out"),
                                 QStringLiteral("Parent folder of the run folders."),
                                 QStringLiteral("DIR"));
    const QCommandLineOption open(
        QStringLiteral("open"),
        QStringLiteral("Open a finished run folder in every panel (and its spec in the form), or "
                       "a saved comparison (*.liftlab-compare)."),
        QStringLiteral("RUN_DIR"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QStringLiteral("Panel to show: %1 (the tabs above).")
                                     .arg(tabKeys.join(QStringLiteral(", "))),
                                 QStringLiteral("NAME"));
    const QCommandLineOption landscape(
        QStringLiteral("compute-landscape"),
        QStringLiteral("With --open: compute (or load cached) landscapes before the screenshot."));
    const QCommandLineOption exportAll(
        QStringLiteral("export-all"),
        QStringLiteral("Before the screenshot, export every panel as PNG into DIR."),
        QStringLiteral("DIR"));
    const QCommandLineOption model(
        QStringLiteral("model"),
        QStringLiteral("Your TorchScript backbone or ICNN for the preset (docs/your-model.md)."),
        QStringLiteral("FILE"));
    const QCommandLineOption constrained(
        QStringLiteral("constrained"),
        QStringLiteral(
            "With --model on an ICNN preset: its non-negative parameters, comma-separated."),
        QStringLiteral("NAMES"));
    parser.addOptions({model, constrained});
    parser.addOptions(
        {preset, autostart, screenshot, quit, steps, out, open, tab, landscape, exportAll});
    parser.process(app);

    const auto given = [&parser](const QCommandLineOption& option) {
        return parser.isSet(option) ? std::optional<QString>(parser.value(option)) : std::nullopt;
    };
    StartupOptions o;
    o.preset = given(preset);
    o.model = given(model);
    o.constrained = given(constrained);
    o.steps = given(steps);
    o.out = given(out);
    o.open = given(open);
    o.tab = given(tab);
    o.autostart = parser.isSet(autostart);
    o.computeLandscape = parser.isSet(landscape);
    o.screenshot = parser.value(screenshot);
    o.exportDir = parser.value(exportAll);
    o.quitWhenDone = parser.isSet(quit);
    return o;
}

}  // namespace liftlab
