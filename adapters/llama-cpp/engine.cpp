// llama.cpp's chat parser behind chatparse's engine protocol, version 1 (JSON lines on
// stdin/stdout; the schema is in the repository README, "Testing another parser").
//
// Each request builds a `common_chat_session` from the request's template file and options
// (llama.cpp's own analysis, generator and PEG parser, or its hand-written parser for the
// families it has one for), then feeds it the output: whole (`one_shot`) or chunk by chunk
// (`stream`), with the deltas `common_chat_msg_diff::compute_diffs` gives between snapshots.
// Templates are parsed once per path. Built by `build.sh` beside this file.
#include "chat.h"
#include "json.h"

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>

static std::string read_file(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        throw std::runtime_error("cannot read " + path);
    }
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

static std::map<std::string, common_chat_templates_ptr> g_templates;

static const common_chat_templates * templates_for(const std::string & path) {
    auto it = g_templates.find(path);
    if (it == g_templates.end()) {
        auto t = common_chat_templates_ptr(common_chat_templates_init(nullptr, read_file(path)));
        it     = g_templates.emplace(path, std::move(t)).first;
    }
    return it->second.get();
}

static common_chat_templates_inputs inputs_of(const common_json & req) {
    common_chat_templates_inputs in;
    in.reasoning_format = COMMON_REASONING_FORMAT_AUTO;  // the server's default
    in.messages = common_chat_msgs_parse_oaicompat(req.at("messages"));
    if (req.contains("tools") && !req.at("tools").is_null() && req.at("tools").size() > 0) {
        in.tools = common_chat_tools_parse_oaicompat(req.at("tools"));
    }
    if (req.contains("tool_choice") && req.at("tool_choice").is_string()) {
        in.tool_choice = common_chat_tool_choice_parse_oaicompat(req.at("tool_choice").get<std::string>());
    }
    if (req.contains("parallel_tool_calls") && req.at("parallel_tool_calls").is_boolean()) {
        in.parallel_tool_calls = req.at("parallel_tool_calls").get<bool>();
    }
    if (req.contains("enable_thinking") && req.at("enable_thinking").is_boolean()) {
        in.enable_thinking = req.at("enable_thinking").get<bool>();
    }
    if (req.contains("reasoning_format") && req.at("reasoning_format").is_string()) {
        in.reasoning_format = common_reasoning_format_from_name(req.at("reasoning_format").get<std::string>());
    }
    if (req.contains("add_generation_prompt") && req.at("add_generation_prompt").is_boolean()) {
        in.add_generation_prompt = req.at("add_generation_prompt").get<bool>();
    }
    if (req.contains("json_schema") && !req.at("json_schema").is_null()) {
        in.json_schema = req.at("json_schema").dump();
    }
    if (req.contains("continue_final_message") && !req.at("continue_final_message").is_null() &&
        !(req.at("continue_final_message").is_string() && req.at("continue_final_message").get<std::string>() == "none")) {
        common_json v = req.at("continue_final_message");
        if (v.is_string() && v.get<std::string>() == "reasoning") {
            v = common_json("reasoning_content");
        } else if (v.is_string() && v.get<std::string>() == "auto") {
            v = common_json(true);
        }
        in.continue_final_message = common_chat_continuation_parse(v);
    }
    in.chat_template_kwargs["enable_thinking"] = in.enable_thinking ? "true" : "false";
    return in;
}

// One chat-completion chunk delta. A call's name goes out once, with its first delta (llama.cpp
// repeats it in later diffs of the same call; a client appends what it receives).
static common_json delta_json(const common_chat_msg_diff & d, std::set<size_t> & named) {
    common_json j = common_json::object();
    if (!d.reasoning_content_delta.empty()) {
        j["reasoning_content"] = d.reasoning_content_delta;
    }
    if (!d.content_delta.empty()) {
        j["content"] = d.content_delta;
    }
    if (d.tool_call_index != std::string::npos) {
        common_json call = common_json::object();
        call["index"]    = (int) d.tool_call_index;
        if (!d.tool_call_delta.id.empty()) {
            call["id"] = d.tool_call_delta.id;
        }
        common_json fn = common_json::object();
        if (!d.tool_call_delta.name.empty() && named.insert(d.tool_call_index).second) {
            fn["name"] = d.tool_call_delta.name;
        }
        if (!d.tool_call_delta.arguments.empty()) {
            fn["arguments"] = d.tool_call_delta.arguments;
        }
        call["function"] = fn;
        common_json calls = common_json::array();
        calls.push_back(call);
        j["tool_calls"] = calls;
    }
    return j;
}

static common_json answer(const common_json & q) {
    common_json out = common_json::object();
    out["v"]        = 1;
    out["id"]       = q.value("id", std::string());
    const auto & tpl = q.at("template");
    if (tpl.is_null() || !tpl.contains("path")) {
        common_json err = common_json::object();
        err["kind"]     = "unsupported";
        err["message"]  = "no template path";
        out["error"]    = err;
        return out;
    }
    auto               tmpls = templates_for(tpl.at("path").get<std::string>());
    auto               in    = inputs_of(q.at("request"));
    common_chat_session session(tmpls, nullptr, in);
    std::string        mode    = q.value("mode", std::string("one_shot"));
    bool               partial = q.value("partial", false);
    if (mode == "one_shot") {
        common_chat_input input(q.value("output", std::string()));
        const auto &      msg = partial ? session.feed(input) : session.finish(input);
        out["message"]        = msg.to_json_oaicompat();
        return out;
    }
    common_json deltas = common_json::array();
    common_chat_msg  prev;
    std::set<size_t> named;
    prev.role = "assistant";
    const auto & chunks = q.at("chunks");
    for (size_t i = 0; i < chunks.size(); i++) {
        const auto & msg = session.feed(common_chat_input(chunks[i].get<std::string>()));
        common_json  ds  = common_json::array();
        for (const auto & d : common_chat_msg_diff::compute_diffs(prev, msg)) {
            ds.push_back(delta_json(d, named));
        }
        deltas.push_back(ds);
        prev = msg;
    }
    if (q.value("finish", true)) {
        common_json last = common_json::array();
        const auto & msg = session.finish();
        for (const auto & d : common_chat_msg_diff::compute_diffs(prev, msg)) {
            last.push_back(delta_json(d, named));
        }
        prev = msg;
        deltas.push_back(last);
    }
    out["deltas"]  = deltas;
    out["message"] = prev.to_json_oaicompat();
    return out;
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        common_json out;
        try {
            auto q = common_json::parse(line);
            try {
                out = answer(q);
            } catch (const std::exception & e) {
                out             = common_json::object();
                out["v"]        = 1;
                out["id"]       = q.value("id", std::string());
                common_json err = common_json::object();
                err["kind"]     = "failed";
                err["message"]  = e.what();
                out["error"]    = err;
            }
        } catch (const std::exception & e) {
            out             = common_json::object();
            out["v"]        = 1;
            common_json err = common_json::object();
            err["kind"]     = "failed";
            err["message"]  = std::string("bad request: ") + e.what();
            out["error"]    = err;
        }
        std::cout << out.dump() << "\n" << std::flush;
    }
    return 0;
}
