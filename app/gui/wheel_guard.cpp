#include "wheel_guard.h"

#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace liftlab {

void WheelGuard::guard(QWidget* root) {
    auto* guard = root->findChild<WheelGuard*>(QString(), Qt::FindDirectChildrenOnly);
    if (!guard) guard = new WheelGuard(root);
    QList<QWidget*> widgets;
    for (auto* w : root->findChildren<QAbstractSpinBox*>()) widgets << w;
    for (auto* w : root->findChildren<QComboBox*>()) widgets << w;
    for (QWidget* w : std::as_const(widgets)) {
        w->setFocusPolicy(Qt::StrongFocus);
        w->removeEventFilter(guard);
        w->installEventFilter(guard);
    }
}

bool WheelGuard::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() != QEvent::Wheel) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!widget || widget->hasFocus()) return false;
    // Ignored and filtered: the spin box does not see it, and the event goes on to the parents
    // (the scroll area scrolls).
    event->ignore();
    return true;
}

}  // namespace liftlab
