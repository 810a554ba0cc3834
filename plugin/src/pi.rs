//! Pi's way of disclosing skills (opt-in, a separate export): a system-prompt
//! block listing each model-invocable skill with its file's location, for the
//! model's ordinary read tool, and the `/skill:NAME` command that expands a
//! skill's body into the user's message.

use crate::config::Config;
use crate::types::{Registry, RegistryError, SkillDefinition, SkillSummary, SnapshotAnswer, StepError};
use crate::user_only::UserOnly;

const PREAMBLE: &str = "\n\nThe following skills provide specialized instructions for specific tasks.\nUse the read tool to load a skill's file when the task matches its description.\nWhen a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n\n<available_skills>";
const COMMAND: &str = "/skill:";

/// XML escaping for Pi's block: `&`, `<`, `>`, `"`, `'`.
pub fn xml(value: &str) -> String {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// The system-prompt block for the model-invocable skills that have a
/// location (a skill the model cannot read is useless to it); empty when
/// there are none.
pub fn system_prompt(skills: &[SkillSummary]) -> String {
    let mut lines = vec![PREAMBLE.to_owned()];
    for skill in skills.iter().filter(|skill| skill.invocation.model_invocable) {
        let Some(path) = &skill.path else { continue };
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", xml(&skill.name)));
        lines.push(format!("    <description>{}</description>", xml(&skill.description)));
        lines.push(format!("    <location>{}</location>", xml(path)));
        lines.push("  </skill>".to_owned());
    }
    if lines.len() == 1 {
        return String::new();
    }
    lines.push("</available_skills>".to_owned());
    lines.join("\n")
}

/// A `/skill:NAME [ARGS]` text, split: `(NAME, ARGS trimmed)`. `None` for any
/// other text.
pub fn parse_command(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix(COMMAND)?;
    Some(match rest.split_once(' ') {
        Some((name, arguments)) => (name, arguments.trim()),
        None => (rest, ""),
    })
}

/// The expansion of a `/skill:` command for a loaded skill with a location:
/// the body wrapped in `<skill name location>`, then the arguments.
pub fn expansion(skill: &SkillDefinition, path: &str, arguments: &str) -> String {
    let directory = path.rfind('/').map_or(".", |slash| if slash == 0 { "/" } else { &path[..slash] });
    let mut text = format!(
        "<skill name=\"{}\" location=\"{path}\">\nReferences are relative to {directory}.\n\n{}\n</skill>",
        skill.name, skill.content
    );
    if !arguments.is_empty() {
        text.push_str("\n\n");
        text.push_str(arguments);
    }
    text
}

/// The `system-prompt` export: the block for the current skills, a
/// `userOnly` skill left out as one the model may not invoke.
pub fn system_prompt_for(config: &Config, registry: &impl Registry) -> Result<String, StepError> {
    match UserOnly::new(registry, &config.user_only).snapshot(None) {
        Ok(SnapshotAnswer::Changed(snapshot)) => Ok(system_prompt(&snapshot.skills)),
        // Asked for no known revision, `Unchanged` cannot be meant: nothing to show.
        Ok(SnapshotAnswer::Unchanged) | Err(RegistryError::Failed(_)) => Ok(String::new()),
        Err(RegistryError::Aborted) => Err(StepError::Aborted),
    }
}

/// The `expand` export: `text` expanded when it is a `/skill:` command for a
/// skill a user may invoke and that has a location; otherwise unchanged.
pub fn expand_for(registry: &impl Registry, text: &str) -> Result<String, StepError> {
    let Some((name, arguments)) = parse_command(text) else {
        return Ok(text.to_owned());
    };
    let skill = match registry.get(name) {
        Ok(skill) => skill,
        Err(RegistryError::Aborted) => return Err(StepError::Aborted),
        Err(RegistryError::Failed(_)) => None,
    };
    Ok(match skill {
        Some(skill) if skill.invocation.user_invocable && skill.name == name => match &skill.path {
            Some(path) => expansion(&skill, path, arguments),
            None => text.to_owned(),
        },
        _ => text.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::InvocationPolicy;

    fn summary(name: &str, description: &str, path: Option<&str>, model_invocable: bool) -> SkillSummary {
        SkillSummary {
            body_digest: None,
            name: name.to_owned(),
            description: description.to_owned(),
            when_to_use: None,
            invocation: InvocationPolicy { model_invocable, user_invocable: true },
            provider: "local".to_owned(),
            source: "project-agents".to_owned(),
            path: path.map(str::to_owned),
        }
    }

    #[test]
    fn the_block_is_exact() {
        let skills = [
            summary("pdf", "Fill <PDF> forms & \"quotes\" 'too'.", Some("/p/.agents/skills/pdf/SKILL.md"), true),
            summary("secret", "Users only.", Some("/p/secret/SKILL.md"), false),
            summary("nowhere", "No file.", None, true),
        ];
        assert_eq!(
            system_prompt(&skills),
            "\n\nThe following skills provide specialized instructions for specific tasks.\nUse the read tool to load a skill's file when the task matches its description.\nWhen a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n\n<available_skills>\n  <skill>\n    <name>pdf</name>\n    <description>Fill &lt;PDF&gt; forms &amp; &quot;quotes&quot; &apos;too&apos;.</description>\n    <location>/p/.agents/skills/pdf/SKILL.md</location>\n  </skill>\n</available_skills>"
        );
    }

    #[test]
    fn nothing_at_all_when_no_skill_is_visible() {
        assert_eq!(system_prompt(&[]), "");
        assert_eq!(system_prompt(&[summary("secret", "x", Some("/s/SKILL.md"), false)]), "");
    }

    #[test]
    fn commands_split_at_the_first_space() {
        assert_eq!(parse_command("/skill:pdf"), Some(("pdf", "")));
        assert_eq!(parse_command("/skill:pdf  fill   form.pdf  "), Some(("pdf", "fill   form.pdf")));
        assert_eq!(parse_command("please /skill:pdf"), None);
        assert_eq!(parse_command("/pdf"), None);
    }

    #[test]
    fn the_expansion_is_exact() {
        let skill = SkillDefinition {
            body_digest: None,
            name: "pdf".to_owned(),
            description: "x".to_owned(),
            invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
            provider: "local".to_owned(),
            resource_base: None,
            path: None,
            content: "# PDF\n\nSteps.".to_owned(),
        };
        let path = "/p/.agents/skills/pdf/SKILL.md";
        assert_eq!(
            expansion(&skill, path, ""),
            "<skill name=\"pdf\" location=\"/p/.agents/skills/pdf/SKILL.md\">\nReferences are relative to /p/.agents/skills/pdf.\n\n# PDF\n\nSteps.\n</skill>"
        );
        assert_eq!(
            expansion(&skill, path, "fill form.pdf"),
            "<skill name=\"pdf\" location=\"/p/.agents/skills/pdf/SKILL.md\">\nReferences are relative to /p/.agents/skills/pdf.\n\n# PDF\n\nSteps.\n</skill>\n\nfill form.pdf"
        );
    }
}
