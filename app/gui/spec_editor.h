// Every setting of a preset as an editable table, generated from the preset's JSON spec: one row
// per scalar or array leaf ("task.n_train", "icnn.width", "diagnostics.shoulder_every",
// "seeds", …), value editable in place, changed rows in bold. The ExperimentForm keeps its
// quick fields (batch, steps, seed, optimizer, the methods' parameters); this table is for
// everything else and is applied on top of them. Values are JSON: 3, 0.5, true, "gumbel" or gumbel,
// [0, 1, 2].
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>
#include <nlohmann/json.hpp>

class QTreeWidget;
class QTreeWidgetItem;

namespace liftlab {

class SpecEditor : public QWidget {
    Q_OBJECT
public:
    explicit SpecEditor(QWidget* parent = nullptr);

    // Lists the leaves of `spec` (methods, name and description excluded: the form owns them).
    void setSpec(const nlohmann::json& spec);
    // The rows the user changed, as dotted-path → value.
    QStringList changedPaths() const;
    // Writes every changed row into `spec`. False, with `error` naming the key, for a value that
    // is not valid JSON nor a plain word.
    bool apply(nlohmann::json& spec, QString* error) const;
    // Sets a row's text as if typed (tests, command line). False for an unknown path.
    bool setValue(const QString& path, const QString& text);
    void resetAll();
    int rowCount() const;

private:
    void addLeaves(const nlohmann::json& node, const std::string& prefix);
    QTreeWidget* tree_ = nullptr;
};

}  // namespace liftlab
