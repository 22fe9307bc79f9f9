#include "spec_editor.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "spec/experiment_spec.h"
#include "spec/spec_fields.h"

namespace liftlab {

namespace {

constexpr int kOriginalRole = Qt::UserRole + 1;

QString display(const nlohmann::json& v) {
    if (v.is_string()) return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

// JSON if it parses, else a plain word is a string ("gumbel"); empty is an error.
bool parseValue(const QString& text, nlohmann::json* out) {
    const std::string s = text.trimmed().toStdString();
    if (s.empty()) return false;
    auto j = nlohmann::json::parse(s, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) {
        *out = j;
        return true;
    }
    if (s.find_first_of("[]{}\",") != std::string::npos) return false;  // broken JSON, not a word
    *out = s;
    return true;
}

}  // namespace

SpecEditor::SpecEditor(QWidget* parent) : QWidget(parent), tree_(new QTreeWidget(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    tree_->setObjectName(QStringLiteral("specTree"));
    tree_->setColumnCount(2);
    tree_->setHeaderLabels({tr("setting"), tr("value")});
    tree_->setRootIsDecorated(false);
    tree_->setAlternatingRowColors(true);
    tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tree_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                           QAbstractItemView::SelectedClicked);
    tree_->setToolTip(
        tr("Every setting of the preset. Double-click a value to change it (JSON: 3, "
           "0.5, true, gumbel, [0, 1, 2]); changed rows are bold."));
    connect(tree_, &QTreeWidget::itemChanged, this, [](QTreeWidgetItem* item, int column) {
        if (column != 1) return;
        QFont f = item->font(0);
        f.setBold(item->text(1) != item->data(1, kOriginalRole).toString());
        item->setFont(0, f);
        item->setFont(1, f);
    });
    auto* reset = new QPushButton(tr("Reset"), this);
    reset->setToolTip(tr("Back to the preset's values"));
    connect(reset, &QPushButton::clicked, this, &SpecEditor::resetAll);
    layout->addWidget(tree_, 1);
    auto* row = new QHBoxLayout;
    row->addStretch(1);
    row->addWidget(reset);
    layout->addLayout(row);
}

void SpecEditor::addRow(const std::string& path, const nlohmann::json& value, const QString& from,
                        const QString& doc) {
    auto* item = new QTreeWidgetItem(tree_);
    item->setText(0, QString::fromStdString(path));
    item->setText(1, display(value));
    item->setData(1, kOriginalRole, display(value));
    item->setFlags(item->flags() | Qt::ItemIsEditable);
    QString tip = tr("spec key %1 — default: %2%3")
                      .arg(QString::fromStdString(path), display(value),
                           from.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(from));
    if (!doc.isEmpty()) tip += QStringLiteral("\n") + doc;
    item->setToolTip(0, tip);
    item->setToolTip(1, tip);
}

bool SpecEditor::listed(const std::string& path, const std::string& key, bool top) const {
    if (top &&
        (key == "methods" || key == "name" || key == "description" || key == "schema_version"))
        return false;
    return !hidden_.contains(QString::fromStdString(path));
}

void SpecEditor::addLeaves(const nlohmann::json& node, const std::string& prefix) {
    for (const auto& [key, value] : node.items()) {
        const std::string path = prefix.empty() ? key : prefix + "." + key;
        if (!listed(path, key, prefix.empty()) || paths_.count(path)) continue;
        if (value.is_object()) {
            addLeaves(value, path);
            continue;
        }
        addRow(path, value, origin_, QString());
    }
}

void SpecEditor::setSpec(const nlohmann::json& spec, const QStringList& hidden,
                         const QString& origin) {
    const QSignalBlocker block(tree_);
    hidden_ = hidden;
    origin_ = origin;
    tree_->clear();
    paths_.clear();
    // Every field of the spec's field list, in its order: the spec's value where it has one,
    // else LiftLab's default for this spec (some follow others: task.fresh_samples follows the
    // target); then any other leaf the spec has (a run's recorded versions, …).
    nlohmann::json resolved;
    try {
        resolved = to_json(parse_spec(spec));
    } catch (const std::exception&) {
        // An invalid spec: the field list's own defaults (Start names the problem).
    }
    const auto lookup = [](const nlohmann::json& j, const std::string& key) {
        const auto dot = key.find('.');
        const std::string first = key.substr(0, dot);
        const nlohmann::json* node = j.is_object() && j.contains(first) ? &j[first] : nullptr;
        if (node && dot != std::string::npos) {
            const std::string rest = key.substr(dot + 1);
            node = node->is_object() && node->contains(rest) ? &(*node)[rest] : nullptr;
        }
        return node;
    };
    for (const auto& row : spec_field_rows()) {
        if (!listed(row.key, row.key, row.key.find('.') == std::string::npos)) continue;
        const nlohmann::json* value = lookup(spec, row.key);
        const nlohmann::json* fallback = lookup(resolved, row.key);
        if (!fallback) fallback = &row.default_value;
        QString doc = QString::fromStdString(row.doc);
        if (value && *value != row.default_value)
            doc += tr(" (LiftLab's default: %1)").arg(display(row.default_value));
        addRow(row.key, value ? *value : *fallback, value ? origin_ : tr("LiftLab's default"), doc);
        paths_.insert(row.key);
    }
    addLeaves(spec, "");
}

QStringList SpecEditor::paths() const {
    QStringList out;
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) out << tree_->topLevelItem(i)->text(0);
    return out;
}

QStringList SpecEditor::changedPaths() const {
    QStringList out;
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        const auto* item = tree_->topLevelItem(i);
        if (item->text(1) != item->data(1, kOriginalRole).toString()) out << item->text(0);
    }
    return out;
}

bool SpecEditor::apply(nlohmann::json& spec, QString* error) const {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        const auto* item = tree_->topLevelItem(i);
        if (item->text(1) == item->data(1, kOriginalRole).toString()) continue;
        nlohmann::json value;
        if (!parseValue(item->text(1), &value)) {
            *error = tr("setting '%1': '%2' is not a value (JSON, or a plain word)")
                         .arg(item->text(0), item->text(1));
            return false;
        }
        nlohmann::json* node = &spec;
        const QStringList parts = item->text(0).split(QLatin1Char('.'));
        for (int k = 0; k < parts.size() - 1; ++k) node = &(*node)[parts[k].toStdString()];
        (*node)[parts.back().toStdString()] = value;
    }
    return true;
}

bool SpecEditor::setValue(const QString& path, const QString& text) {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        auto* item = tree_->topLevelItem(i);
        if (item->text(0) == path) {
            item->setText(1, text);
            return true;
        }
    }
    return false;
}

void SpecEditor::resetAll() {
    for (int i = 0; i < tree_->topLevelItemCount(); ++i) {
        auto* item = tree_->topLevelItem(i);
        item->setText(1, item->data(1, kOriginalRole).toString());
    }
}

int SpecEditor::rowCount() const {
    return tree_->topLevelItemCount();
}

}  // namespace liftlab
