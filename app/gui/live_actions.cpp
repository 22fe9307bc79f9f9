#include "live_actions.h"

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QToolBar>
#include <QVBoxLayout>
#include <cmath>

#include "core/c_numbers.h"
#include "landscape_page.h"
#include "main_window.h"
#include "run_controls.h"
#include "run_view.h"
#include "training_session.h"

namespace liftlab {

namespace {

// The shoulder's edge: σ(θ̃) < 0.05 ⇔ θ̃ < log(0.05/0.95) ≈ −2.944 (docs/methods.md §4.2).
const double kPushShoulderEdge = std::log(0.05 / 0.95);

QString liveNumber(double v) {
    return QString::fromStdString(c_shortest(v));
}

}  // namespace

LiveSettingDialog::LiveSettingDialog(const ExperimentSpec& spec, const TrainingSession* session,
                                     QWidget* parent)
    : QDialog(parent), spec_(spec), session_(session) {
    setWindowTitle(tr("Change a setting of the running run"));
    setObjectName(QStringLiteral("liveSettingDialog"));
    auto* form = new QFormLayout;
    method_ = new QComboBox(this);
    for (const auto& m : spec_.methods)
        if (!live_setting_keys(spec_, m).empty()) method_->addItem(QString::fromStdString(m.label));
    key_ = new QComboBox(this);
    now_ = new QLabel(this);
    value_ = new QLineEdit(this);
    value_->setPlaceholderText(tr("a number, e.g. 10 or 1e-3"));
    error_ = new QLabel(this);
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #b00020"));
    form->addRow(tr("Method"), method_);
    form->addRow(tr("Setting"), key_);
    form->addRow(tr("Now"), now_);
    form->addRow(tr("New value"), value_);
    auto* note = new QLabel(
        tr("Takes effect after the step the run gives it (the next log point when the methods "
           "train on several threads), for every seed; recorded in events.csv and spec.json."),
        this);
    note->setWordWrap(true);
    buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons_->button(QDialogButtonBox::Ok)->setText(tr("Apply at the next step"));
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(note);
    column->addWidget(error_);
    column->addWidget(buttons_);
    connect(method_, &QComboBox::currentIndexChanged, this, [this] { fillKeys(); });
    connect(key_, &QComboBox::currentIndexChanged, this, [this] { showCurrent(); });
    connect(buttons_, &QDialogButtonBox::accepted, this, &LiveSettingDialog::tryAccept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    fillKeys();
}

void LiveSettingDialog::fillKeys() {
    key_->clear();
    for (const auto& m : spec_.methods)
        if (QString::fromStdString(m.label) == method_->currentText())
            for (const auto& k : live_setting_keys(spec_, m))
                key_->addItem(QString::fromStdString(k));
    showCurrent();
}

void LiveSettingDialog::showCurrent() {
    const auto settings = session_ ? session_->liveSettings()
                                   : std::map<std::string, std::map<std::string, double>>{};
    const auto m = settings.find(method_->currentText().toStdString());
    if (m != settings.end()) {
        const auto k = m->second.find(key_->currentText().toStdString());
        if (k != m->second.end()) {
            now_->setText(liveNumber(k->second));
            return;
        }
    }
    now_->setText(tr("(not yet known: the run has not started training)"));
}

bool LiveSettingDialog::describedEvent(RunEvent* out, QString* error) const {
    double v = 0;
    const std::string text = value_->text().trimmed().toStdString();
    if (!c_parse_double(text, &v) || !std::isfinite(v)) {
        *error = tr("'%1' is not a number (C notation: 0.5, 1e-3)").arg(value_->text());
        return false;
    }
    *out = RunEvent{0, method_->currentText().toStdString(), key_->currentText().toStdString(), v};
    return true;
}

void LiveSettingDialog::tryAccept() {
    RunEvent e;
    QString error;
    if (method_->count() == 0) {
        error_->setText(tr("No method of this run has a setting that can change while it trains."));
        return;
    }
    if (!describedEvent(&e, &error)) {
        error_->setText(error);
        return;
    }
    try {
        check_live_event(spec_, e);
    } catch (const std::exception& ex) {
        error_->setText(QString::fromStdString(ex.what()));
        return;
    }
    error_->clear();
    Q_EMIT chosen(e);
    accept();
}

PushDialog::PushDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Push into the shoulder"));
    setObjectName(QStringLiteral("pushDialog"));
    layers_ = new QComboBox(this);
    layers_->addItem(tr("readout (the last constrained layer)"), QStringLiteral("readout"));
    layers_->addItem(tr("hidden (the other constrained layers)"), QStringLiteral("hidden"));
    layers_->addItem(tr("all constrained layers"), QStringLiteral("all"));
    fraction_ = new QDoubleSpinBox(this);
    fraction_->setRange(0.01, 1.0);
    fraction_->setSingleStep(0.05);
    fraction_->setDecimals(2);
    fraction_->setValue(0.33);
    depth_ = new QDoubleSpinBox(this);
    depth_->setDecimals(2);
    // Below the shoulder's edge −2.944 (σ(θ̃) < 0.05), at most 50 deep (as the spec checks).
    depth_->setRange(-50.0, -2.95);
    depth_->setSingleStep(0.5);
    depth_->setValue(-4.0);
    sigma_ = new QLabel(this);
    auto* form = new QFormLayout;
    form->addRow(tr("Layers"), layers_);
    form->addRow(tr("Fraction of their coordinates"), fraction_);
    form->addRow(tr("Depth θ̃"), depth_);
    form->addRow(QString(), sigma_);
    auto* note = new QLabel(tr("The same seeded coordinates of every method are set to θ̃ = depth "
                               "(pgd: θ = 0) after the step the run gives the push; the Escape "
                               "tab then shows who leaves the shoulder."),
                            this);
    note->setWordWrap(true);
    buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons_->button(QDialogButtonBox::Ok)->setText(tr("Push at the next step"));
    auto* column = new QVBoxLayout(this);
    column->addLayout(form);
    column->addWidget(note);
    column->addWidget(buttons_);
    connect(depth_, &QDoubleSpinBox::valueChanged, this, [this] { showDepth(); });
    connect(buttons_, &QDialogButtonBox::accepted, this, [this] {
        if (!(depth_->value() < kPushShoulderEdge)) return;  // the spin box's range keeps it below
        Q_EMIT chosen(pushEvent());
        accept();
    });
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
    showDepth();
}

void PushDialog::showDepth() {
    const double s = 1.0 / (1.0 + std::exp(-depth_->value()));
    sigma_->setText(tr("σ(θ̃) = %1 (the shoulder: σ < 0.05, θ̃ < %2)")
                        .arg(liveNumber(std::round(s * 1e4) / 1e4),
                             liveNumber(std::round(kPushShoulderEdge * 1e3) / 1e3)));
}

RunEvent PushDialog::pushEvent() const {
    RunEvent e;
    e.method = "push";
    e.key = layers_->currentData().toString().toStdString();
    e.value = fraction_->value();
    e.depth = depth_->value();
    return e;
}

LiveActions::LiveActions(MainWindow* window, TrainingSession* session)
    : QObject(window), window_(window), session_(session) {
    change_ = new QAction(tr("Change &setting…"), this);
    change_->setObjectName(QStringLiteral("changeSetting"));
    change_->setToolTip(tr("Change a method's learning rate, λ, β or ρ while the run trains"));
    push_ = new QAction(tr("&Push into the shoulder…"), this);
    push_->setObjectName(QStringLiteral("pushShoulder"));
    landscapeNow_ = new QAction(tr("&Landscape at this step"), this);
    landscapeNow_->setObjectName(QStringLiteral("landscapeNow"));
    connect(landscapeNow_, &QAction::triggered, this, [this] { landscapeNow(); });
    connect(change_, &QAction::triggered, this, &LiveActions::openChangeSetting);
    connect(push_, &QAction::triggered, this, &LiveActions::openPush);
    connect(session_, &TrainingSession::eventOutcome, this, &LiveActions::onOutcome);
    // Beside the run actions: the toolbar and the Run menu.
    window_->runControls()->toolBar()->addAction(change_);
    window_->runControls()->toolBar()->addAction(push_);
    for (QAction* top : window_->menuBar()->actions())
        if (top->menu() && top->text().remove(QLatin1Char('&')) == QLatin1String("Run")) {
            top->menu()->addSeparator();
            top->menu()->addAction(change_);
            top->menu()->addAction(push_);
            top->menu()->addAction(landscapeNow_);
        }
    setRunning(false);
}

QString LiveActions::whyNoPush(const ExperimentSpec& spec) {
    if (!is_icnn_task(spec.task.kind)) return tr("a push needs an ICNN run (icnn-ebm-*, cpflow-*)");
    if (spec.icnn.architecture != "liftlab")
        return tr("a push needs the liftlab ICNN architecture (not %1)")
            .arg(QString::fromStdString(spec.icnn.architecture));
    return QString();
}

void LiveActions::setRunning(bool running) {
    change_->setEnabled(running);
    const QString whyNot = running ? whyNoPush(session_->spec()) : tr("no run is training");
    push_->setEnabled(whyNot.isEmpty());
    push_->setToolTip(whyNot.isEmpty()
                          ? tr("Set a fraction of every method's constrained coordinates into the "
                               "readout shoulder at the next step")
                          : tr("Push into the shoulder: off (%1)").arg(whyNot));
    const ExperimentSpec& spec = session_->spec();
    const QString noLandscape =
        !running                        ? tr("no run is training")
        : !is_icnn_task(spec.task.kind) ? tr("landscapes are drawn for ICNN runs")
        : spec.diagnostics.checkpoint_every <= 0
            ? tr("this run records no checkpoints (diagnostics.checkpoint_every)")
            : QString();
    landscapeNow_->setEnabled(noLandscape.isEmpty());
    landscapeNow_->setToolTip(
        noLandscape.isEmpty()
            ? tr("Compute the θ and lifted landscapes at the run's latest checkpoint on a worker, "
                 "while it trains (Landscape tab: progress and Cancel)")
            : tr("Landscape at this step: off (%1)").arg(noLandscape));
    if (!running) {
        if (settingDialog_) settingDialog_->reject();
        if (pushDialog_) pushDialog_->reject();
    }
}

void LiveActions::openChangeSetting() {
    if (!session_->isRunning()) return;
    if (settingDialog_) settingDialog_->reject();
    settingDialog_ = new LiveSettingDialog(session_->spec(), session_, window_);
    settingDialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(settingDialog_, &LiveSettingDialog::chosen, this, &LiveActions::send);
    connect(settingDialog_, &QObject::destroyed, this, [this] { settingDialog_ = nullptr; });
    settingDialog_->open();  // window-modal, returns at once: the run goes on
}

void LiveActions::openPush() {
    if (!session_->isRunning() || !whyNoPush(session_->spec()).isEmpty()) return;
    if (pushDialog_) pushDialog_->reject();
    pushDialog_ = new PushDialog(window_);
    pushDialog_->setAttribute(Qt::WA_DeleteOnClose);
    connect(pushDialog_, &PushDialog::chosen, this, &LiveActions::send);
    connect(pushDialog_, &QObject::destroyed, this, [this] { pushDialog_ = nullptr; });
    pushDialog_->open();
}

bool LiveActions::landscapeNow() {
    if (!landscapeNow_->isEnabled()) return false;
    RunView* view = window_->runView();
    QString whyNot;
    if (!view->landscapeTab()->computeLive(session_->liveRunDir(), &whyNot)) {
        window_->showMessage(tr("No landscape now: %1").arg(whyNot), true);
        return false;
    }
    view->setCurrentIndex(RunView::LandscapeTab);
    window_->showMessage(
        tr("Computing the landscapes at the latest checkpoint beside the run "
           "(Landscape tab: progress and Cancel)."));
    return true;
}

void LiveActions::send(const RunEvent& event) {
    const QString error = session_->sendEvent(event);
    if (!error.isEmpty()) {
        window_->showMessage(tr("Not sent: %1").arg(error), true);
        return;
    }
    window_->showMessage(
        tr("Sent %1: it takes effect at the next step the run can give it…")
            .arg(event.method == "push"
                     ? tr("the push (%1, %2 of the coordinates)")
                           .arg(QString::fromStdString(event.key), liveNumber(event.value))
                     : QString::fromStdString(event.method + "." + event.key + " = " +
                                              c_shortest(event.value))));
}

void LiveActions::onOutcome(const SessionEventOutcome& outcome) {
    if (!outcome.error.isEmpty())
        window_->showMessage(tr("Refused %1: %2").arg(outcome.text, outcome.error), true);
    else
        window_->showMessage(tr("%1 applies after step %L2 (events.csv, spec.json live_events)")
                                 .arg(outcome.text)
                                 .arg(outcome.step));
}

}  // namespace liftlab
