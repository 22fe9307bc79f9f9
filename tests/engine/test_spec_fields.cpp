// The spec's one field list (spec/spec_fields.h): it covers every member of every spec struct,
// and every field, set to a value other than its default, survives to_json and the reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "core/errors.h"
#include "spec/experiment_spec.h"
#include "spec/spec_fields.h"

using liftlab::ExperimentSpec;
using nlohmann::json;

namespace {

// A value other than `v` for every field type of the spec.
template <typename M>
void change(M& v) {
    using T = std::decay_t<M>;
    if constexpr (std::is_same_v<T, bool>) {
        v = !v;
    } else if constexpr (std::is_same_v<T, std::string>) {
        v += "-changed";
    } else if constexpr (std::is_integral_v<T>) {
        v = static_cast<T>(v + 7);
    } else if constexpr (std::is_floating_point_v<T>) {
        v = v * 2 + 0.375;  // never v itself; exact in binary
    } else if constexpr (std::is_same_v<T, std::vector<json>>) {
        v.push_back(json(3));
    } else {
        using U = typename T::value_type;  // std::vector of a scalar
        U extra{};
        change(extra);
        v.push_back(extra);
    }
}

// Every plain field of `s` (sub-structs walked) set to a non-default value.
template <typename S>
void change_every_field(S& s) {
    liftlab::visit_fields(s, [](const char*, auto& member, const char*) {
        using M = std::decay_t<decltype(member)>;
        if constexpr (liftlab::is_spec_section_v<M>)
            change_every_field(member);
        else
            change(member);
    });
}

// "task.noise" → the member's value as JSON (nlohmann's conversion of the member itself, not
// to_json), for every field of the list.
template <typename S>
void field_values(const S& s, const std::string& prefix, std::map<std::string, json>& out) {
    liftlab::visit_fields(s, [&](const char* k, const auto& member, const char*) {
        using M = std::decay_t<decltype(member)>;
        if constexpr (liftlab::is_spec_section_v<M>)
            field_values(member, prefix + k + ".", out);
        else
            out[prefix + k] = json(member);
    });
}

std::map<std::string, json> field_values(const ExperimentSpec& s) {
    std::map<std::string, json> out;
    field_values(s, "", out);
    return out;
}

// Members of a struct by address: the listed ones and the special cases the test names.
struct Layout {
    struct Member {
        std::string name;
        size_t offset, size, align;
    };
    std::vector<Member> members;
    template <typename S, typename M>
    void add(const S& s, const M& m, const std::string& name) {
        const auto offset = static_cast<size_t>(reinterpret_cast<const char*>(&m) -
                                                reinterpret_cast<const char*>(&s));
        members.push_back({name, offset, sizeof(M), alignof(M)});
    }
    template <typename S>
    void add_listed(const S& s) {
        liftlab::visit_fields(
            s, [&](const char* k, const auto& member, const char*) { add(s, member, k); });
    }
};

size_t align_up(size_t n, size_t a) {
    return (n + a - 1) / a * a;
}

// The listed members tile the struct: each starts at the first offset its alignment allows after
// the previous one, and the struct ends where the last one does (rounded to its alignment). A
// member missing from the list shifts everything after it (or the struct's size), so this fails
// for any member the list does not name — except one small enough to sit entirely in padding
// the listed members leave (a bool or int between an int and an 8-byte-aligned member); the
// round-trip below then still covers every listed field.
template <typename S>
void expect_layout_covered(const S& s, Layout layout, const char* name) {
    auto& m = layout.members;
    std::sort(m.begin(), m.end(),
              [](const Layout::Member& a, const Layout::Member& b) { return a.offset < b.offset; });
    size_t end = 0;
    std::string previous = "(start)";
    for (const auto& member : m) {
        EXPECT_EQ(member.offset, align_up(end, member.align))
            << name << ": a member that visit_fields does not list lies between " << previous
            << " and " << member.name;
        end = member.offset + member.size;
        previous = member.name;
    }
    EXPECT_EQ(sizeof(S), align_up(end, alignof(S)))
        << name << ": a member that visit_fields does not list follows " << previous;
}

// A spec with every field, and each special case (freeze, methods, events), off its default.
ExperimentSpec changed_spec() {
    ExperimentSpec s;
    change_every_field(s);
    s.backbone.freeze_names = {"layers.0.weight", "layers.1.bias"};
    for (const char* name : {"cf-rls", "adam"}) {
        liftlab::MethodSpec m = liftlab::default_method(name);
        m.label = std::string(name) + "-changed";
        for (const auto& p : liftlab::method_parameters()) p.set(m, p.get(m) * 2 + 1.375);
        s.methods.push_back(m);
    }
    liftlab::RunEvent change_lr;
    change(change_lr.step);
    change(change_lr.method);
    change(change_lr.key);
    change(change_lr.value);  // depth is a push's only
    liftlab::RunEvent push;
    change_every_field(push);
    push.method = "push";
    s.events = {change_lr, push};
    return s;
}

}  // namespace

TEST(SpecFields, TheFieldListCoversEveryMemberOfEverySpecStruct) {
    const ExperimentSpec s;
    {
        Layout l;
        l.add_listed(s);
        l.add(s, s.methods, "methods");  // MethodParameter table
        l.add(s, s.events, "events");    // a list of RunEvent
        expect_layout_covered(s, l, "ExperimentSpec");
    }
    {
        Layout l;
        l.add_listed(s.backbone);
        // backbone.freeze: one key for three members
        l.add(s.backbone, s.backbone.freeze_all, "freeze_all");
        l.add(s.backbone, s.backbone.freeze_names, "freeze_names");
        l.add(s.backbone, s.backbone.freeze_regex, "freeze_regex");
        expect_layout_covered(s.backbone, l, "BackboneSpec");
    }
    const auto plain = [](const auto& sub, const char* name) {
        Layout l;
        l.add_listed(sub);
        expect_layout_covered(sub, l, name);
    };
    plain(s.task, "TaskSpec");
    plain(s.icnn, "IcnnSpec");
    plain(s.optimizer, "OptimizerSpec");
    plain(s.sweep, "SweepSpec");
    plain(s.diagnostics, "DiagnosticsSpec");
    plain(liftlab::RunEvent{}, "RunEvent");
}

TEST(SpecFields, EveryFieldSetOffItsDefaultSurvivesToJsonAndBack) {
    const ExperimentSpec s = changed_spec();
    const auto defaults = field_values(ExperimentSpec{});
    const auto changed = field_values(s);
    ASSERT_EQ(changed.size(), defaults.size());
    ASSERT_GT(changed.size(), 100u);
    for (const auto& [key, value] : changed)  // the test's own premise
        EXPECT_NE(value, defaults.at(key)) << key << " was not changed";

    const json written = liftlab::to_json(s);
    const ExperimentSpec back = liftlab::read_spec_fields(written);
    const auto read = field_values(back);
    ASSERT_EQ(read.size(), changed.size());
    for (const auto& [key, value] : changed)
        EXPECT_EQ(read.at(key), value) << key << " is lost between to_json and the reader";

    EXPECT_EQ(back.backbone.freeze_names, s.backbone.freeze_names);
    EXPECT_FALSE(back.backbone.freeze_all);
    EXPECT_TRUE(back.backbone.freeze_regex.empty());
    ASSERT_EQ(back.methods.size(), s.methods.size());
    for (size_t i = 0; i < s.methods.size(); ++i) {
        EXPECT_EQ(back.methods[i].name, s.methods[i].name);
        EXPECT_EQ(back.methods[i].label, s.methods[i].label);
        for (const auto& p : liftlab::method_parameters())
            EXPECT_EQ(p.get(back.methods[i]), p.get(s.methods[i])) << i << " " << p.key;
    }
    EXPECT_EQ(back.events, s.events);
    // The writer is deterministic on what it read.
    EXPECT_EQ(liftlab::to_json(back), written);
}

TEST(SpecFields, BackboneFreezeRoundTripsInEachOfItsForms) {
    for (int form = 0; form < 3; ++form) {
        ExperimentSpec s;
        if (form == 0) s.backbone.freeze_all = true;
        if (form == 1) s.backbone.freeze_names = {"fc.weight"};
        if (form == 2) s.backbone.freeze_regex = "layers\\.0\\..*";
        const auto back = liftlab::read_spec_fields(liftlab::to_json(s));
        EXPECT_EQ(back.backbone.freeze_all, s.backbone.freeze_all) << form;
        EXPECT_EQ(back.backbone.freeze_names, s.backbone.freeze_names) << form;
        EXPECT_EQ(back.backbone.freeze_regex, s.backbone.freeze_regex) << form;
    }
}

// The window's All settings rows are the writer's keys: every leaf of a resolved spec has a row
// (with a doc) and every row a leaf.
TEST(SpecFields, SettingsRowsAreTheResolvedSpecsLeaves) {
    ExperimentSpec s;
    s.methods = {liftlab::default_method("adam")};
    const json j = liftlab::to_json(s);
    std::vector<std::string> leaves;
    for (const auto& [key, value] : j.items()) {
        if (key == "methods" || key == "schema_version") continue;
        if (value.is_object())
            for (const auto& [sub, unused] : value.items()) leaves.push_back(key + "." + sub);
        else
            leaves.push_back(key);
    }
    std::vector<std::string> rows;
    for (const auto& row : liftlab::spec_field_rows()) {
        rows.push_back(row.key);
        EXPECT_FALSE(row.doc.empty()) << row.key;
    }
    std::sort(leaves.begin(), leaves.end());
    std::vector<std::string> sorted_rows = rows;
    std::sort(sorted_rows.begin(), sorted_rows.end());
    EXPECT_EQ(sorted_rows, leaves);
    // Each row's default is what the writer writes for a default spec.
    for (const auto& row : liftlab::spec_field_rows()) {
        const auto dot = row.key.find('.');
        const json& written = dot == std::string::npos
                                  ? j.at(row.key)
                                  : j.at(row.key.substr(0, dot)).at(row.key.substr(dot + 1));
        EXPECT_EQ(row.default_value, written) << row.key;
    }
}

// The reader keeps parse_spec's strictness on types and unknown keys.
TEST(SpecFields, TheFieldReaderNamesUnknownKeysAndWrongTypes) {
    json j = liftlab::to_json(ExperimentSpec{});
    j["icnn"]["widht"] = 3;
    try {
        liftlab::read_spec_fields(j);
        ADD_FAILURE() << "icnn.widht accepted";
    } catch (const liftlab::SpecError& e) {
        EXPECT_EQ(e.key(), "icnn.widht");
    }
    j = liftlab::to_json(ExperimentSpec{});
    j["diagnostics"]["probe_size"] = "many";
    try {
        liftlab::read_spec_fields(j);
        ADD_FAILURE() << "a string probe_size accepted";
    } catch (const liftlab::SpecError& e) {
        EXPECT_EQ(e.key(), "diagnostics.probe_size");
    }
}
