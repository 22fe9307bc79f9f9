// A row of controls above a panel (a combo box, buttons, a slider …), left-aligned with the
// margins every tab of the run view uses. Shared by the run view and the landscape page.
#pragma once
#include <QHBoxLayout>
#include <QWidget>
#include <initializer_list>

namespace liftlab {

inline QWidget* controlRow(QWidget* parent, std::initializer_list<QWidget*> widgets) {
    auto* w = new QWidget(parent);
    auto* l = new QHBoxLayout(w);
    l->setContentsMargins(6, 2, 6, 2);
    for (QWidget* x : widgets) l->addWidget(x);
    l->addStretch(1);
    return w;
}

}  // namespace liftlab
