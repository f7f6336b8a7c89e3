//! Custom subagents from Markdown files: `.claude/agents/*.md` (project)
//! and `~/.claude/agents/*.md` (user). The frontmatter gives `name`,
//! `description`, `tools` and `model`; the body is the subagent's system
//! prompt. They join [`Options::agents`](crate::Options::agents) for the
//! `Task` tool.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use tascer_guard::settings::SettingsSource;

use crate::error::Error;
use crate::frontmatter::{self, NameList};
use crate::options::AgentDefinition;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Meta {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    tools: NameList,
    model: Option<String>,
    max_turns: Option<u32>,
}

/// Loads the agent files `sources` select: user ones first, then project
/// ones, which replace user agents of the same name.
pub fn load(
    cwd: &Path,
    user_dir: Option<&Path>,
    sources: &[SettingsSource],
) -> Result<BTreeMap<String, AgentDefinition>, Error> {
    let mut agents = BTreeMap::new();
    if sources.contains(&SettingsSource::User)
        && let Some(dir) = user_dir
    {
        load_dir(&dir.join("agents"), &mut agents)?;
    }
    if sources.contains(&SettingsSource::Project) {
        load_dir(&cwd.join(".claude").join("agents"), &mut agents)?;
    }
    Ok(agents)
}

/// The agents of a plugin's agents directory (or one `.md` file), named
/// `<plugin>:<name>` as Claude Code names them.
pub(crate) fn load_plugin(
    path: &Path,
    plugin: &str,
) -> Result<BTreeMap<String, AgentDefinition>, Error> {
    let mut agents = BTreeMap::new();
    let files = match path.is_file() {
        true => vec![path.to_path_buf()],
        false => crate::commands::markdown_files(path)?,
    };
    read_files(files, &mut agents)?;
    Ok(agents
        .into_iter()
        .map(|(name, agent)| (format!("{plugin}:{name}"), agent))
        .collect())
}

fn load_dir(dir: &Path, out: &mut BTreeMap<String, AgentDefinition>) -> Result<(), Error> {
    read_files(crate::commands::markdown_files(dir)?, out)
}

fn read_files(
    files: Vec<std::path::PathBuf>,
    out: &mut BTreeMap<String, AgentDefinition>,
) -> Result<(), Error> {
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::Definition(format!("cannot read the agent {}: {e}", path.display()))
        })?;
        let (meta, body): (Meta, String) = frontmatter::parse(&text, &path)?;
        let name = meta.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        let Some(description) = meta.description.filter(|d| !d.trim().is_empty()) else {
            return Err(Error::Definition(format!(
                "{}: the agent {name:?} needs a `description` in its frontmatter (the model \
                 picks agents by it)",
                path.display()
            )));
        };
        out.insert(
            name,
            AgentDefinition {
                description,
                prompt: body.trim().to_string(),
                tools: meta.tools.names(),
                model: meta.model.filter(|m| m != "inherit"),
                max_turns: meta.max_turns,
            },
        );
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn project_agents_replace_user_agents_and_need_a_description() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(user.join("agents")).unwrap();
        std::fs::create_dir_all(ws.join(".claude/agents")).unwrap();
        std::fs::write(
            user.join("agents/reviewer.md"),
            "---\ndescription: user reviewer\n---\nUSER",
        )
        .unwrap();
        std::fs::write(
            ws.join(".claude/agents/reviewer.md"),
            "---\nname: reviewer\ndescription: project reviewer\ntools: Read, Grep\nmodel: inherit\n---\nPROJECT\n",
        )
        .unwrap();
        let all = [SettingsSource::User, SettingsSource::Project];
        let agents = load(&ws, Some(&user), &all).unwrap();
        let reviewer = &agents["reviewer"];
        assert_eq!(reviewer.description, "project reviewer");
        assert_eq!(reviewer.prompt, "PROJECT");
        assert_eq!(
            reviewer.tools.as_deref(),
            Some(&["Read".to_string(), "Grep".to_string()][..])
        );
        assert_eq!(reviewer.model, None);

        std::fs::write(ws.join(".claude/agents/bad.md"), "no frontmatter").unwrap();
        let err = load(&ws, Some(&user), &all).unwrap_err().to_string();
        assert!(
            err.contains("bad.md") && err.contains("description"),
            "{err}"
        );
    }
}
