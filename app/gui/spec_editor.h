// Every setting of a preset as an editable table, generated from the spec's field list
// (spec/spec_fields.h) and the preset's JSON spec: one row per scalar or array leaf
// ("task.n_train", "icnn.width", "diagnostics.shoulder_every", …), value editable in place, changed
// rows in bold. The ExperimentForm keeps its own fields (batch, steps, seeds, log interval,
// optimizer, the methods' parameters, the user's model) and this table lists everything else, so
// that no setting has two places that could disagree. Values are JSON: 3, 0.5, true, "gumbel" or
// gumbel, [0, 1, 2].
#pragma once
#include <QString>
#include <QStringList>
#include <QWidget>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

class QTreeWidget;
class QTreeWidgetItem;

namespace liftlab {

class SpecEditor : public QWidget {
    Q_OBJECT
public:
    explicit SpecEditor(QWidget* parent = nullptr);

    // Lists every field of the spec's field list (spec/spec_fields.h, in its order; a key `spec`
    // leaves out shows LiftLab's default), then any other leaf of `spec` (a run's recorded
    // versions, …), but those in `hidden` (dotted paths the form's own fields show: every setting
    // has one place) and methods, name, description and schema_version. Each row's tooltip names
    // its spec key, the value it came with (`origin`: "preset cf-regression", "the opened run")
    // and the field's documentation.
    void setSpec(const nlohmann::json& spec, const QStringList& hidden = {},
                 const QString& origin = QString());
    // The listed paths, in order.
    QStringList paths() const;
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
    void addRow(const std::string& path, const nlohmann::json& value, const QString& from,
                const QString& doc);
    bool listed(const std::string& path, const std::string& key, bool top) const;
    std::set<std::string> paths_;  // the rows of the field list (spec/spec_fields.h)
    QStringList hidden_;
    QString origin_;
    QTreeWidget* tree_ = nullptr;
};

}  // namespace liftlab
