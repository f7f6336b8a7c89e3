//! Skills: `.claude/skills/<name>/SKILL.md` (project) and
//! `~/.claude/skills/<name>/SKILL.md` (user). The model sees each skill's
//! name and description in the `Skill` tool; calling the tool returns the
//! skill's instructions and its directory. The tool goes through the same
//! governance pipeline as every other tool.

use std::path::{Path, PathBuf};

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tascer_core::{Tool, ToolContext, ToolOutput};
use tascer_guard::settings::SettingsSource;

use crate::error::Error;
use crate::frontmatter;

/// The tool's name, as in Claude Code.
pub const SKILL_TOOL_NAME: &str = "Skill";

/// Where a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillScope {
    /// `~/.claude/skills/`.
    User,
    /// `.claude/skills/` of the working directory.
    Project,
    /// A plugin's `skills/` (named `<plugin>:<name>`).
    Plugin,
}

/// One skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// Its name (frontmatter `name`, else the directory's name).
    pub name: String,
    /// When to use it (frontmatter `description`, else the body's first
    /// line).
    pub description: String,
    /// Its directory (files the instructions refer to live there).
    pub dir: PathBuf,
    /// The instructions.
    pub body: String,
    /// Where it comes from.
    pub scope: SkillScope,
}

#[derive(Debug, Default, Deserialize)]
struct Meta {
    name: Option<String>,
    description: Option<String>,
}

/// Loads the skills of `.claude/skills/` under `cwd` (with the `project`
/// source) and of `user_dir/skills/` (with `user`). A project skill hides
/// a user skill of the same name.
pub fn load(
    cwd: &Path,
    user_dir: Option<&Path>,
    sources: &[SettingsSource],
) -> Result<Vec<Skill>, Error> {
    let mut skills = Vec::new();
    if sources.contains(&SettingsSource::Project) {
        load_dir(
            &cwd.join(".claude").join("skills"),
            SkillScope::Project,
            &mut skills,
        )?;
    }
    if sources.contains(&SettingsSource::User)
        && let Some(dir) = user_dir
    {
        let mut user = Vec::new();
        load_dir(&dir.join("skills"), SkillScope::User, &mut user)?;
        user.retain(|u: &Skill| !skills.iter().any(|s: &Skill| s.name == u.name));
        skills.extend(user);
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(skills)
}

/// The skills of a plugin's skills directory (folders with a `SKILL.md`,
/// or one such folder), named `<plugin>:<name>` as Claude Code names them.
pub(crate) fn load_plugin(dir: &Path, plugin: &str) -> Result<Vec<Skill>, Error> {
    let mut skills = Vec::new();
    match dir.join("SKILL.md").is_file() {
        true => read_skill(dir, SkillScope::Plugin, &mut skills)?,
        false => load_dir(dir, SkillScope::Plugin, &mut skills)?,
    }
    for skill in &mut skills {
        skill.name = format!("{plugin}:{}", skill.name);
    }
    Ok(skills)
}

fn load_dir(dir: &Path, scope: SkillScope, out: &mut Vec<Skill>) -> Result<(), Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(Error::Definition(format!(
                "cannot read the skills directory {}: {e}",
                dir.display()
            )));
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.md").is_file())
        .collect();
    dirs.sort();
    for skill_dir in dirs {
        read_skill(&skill_dir, scope, out)?;
    }
    Ok(())
}

/// Reads the skill of `skill_dir/SKILL.md`.
fn read_skill(skill_dir: &Path, scope: SkillScope, out: &mut Vec<Skill>) -> Result<(), Error> {
    let file = skill_dir.join("SKILL.md");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::Definition(format!("cannot read the skill {}: {e}", file.display())))?;
    let (meta, body): (Meta, String) = frontmatter::parse(&text, &file)?;
    let dir_name = skill_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.push(Skill {
        name: meta.name.unwrap_or(dir_name),
        description: meta
            .description
            .unwrap_or_else(|| crate::commands::first_line(&body).to_string()),
        dir: skill_dir.to_path_buf(),
        body,
        scope,
    });
    Ok(())
}

/// The `Skill` tool over a session's skills.
pub(crate) struct SkillTool {
    skills: Vec<Skill>,
    description: String,
}

impl SkillTool {
    /// A tool offering `skills` (which must not be empty).
    pub fn new(skills: Vec<Skill>) -> Self {
        let mut description = String::from(
            "Load a skill: instructions for a kind of task, with files in its directory. \
             When a task matches a skill's description, call this tool with the skill's name \
             first and follow the instructions it returns.\n\n<available_skills>\n",
        );
        for skill in &skills {
            description.push_str(&format!("- {}: {}\n", skill.name, skill.description));
        }
        description.push_str("</available_skills>");
        SkillTool {
            skills,
            description,
        }
    }

    fn run(&self, input: &Value) -> ToolOutput {
        let Some(name) = input
            .get("skill")
            .or_else(|| input.get("command"))
            .and_then(Value::as_str)
        else {
            return ToolOutput::error("Skill input needs `skill`: the name of the skill to load");
        };
        let name = name.trim().trim_start_matches('/');
        let Some(skill) = self.skills.iter().find(|s| s.name == name) else {
            let known: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
            return ToolOutput::error(format!(
                "Unknown skill: {name}. Available skills: {}",
                known.join(", ")
            ));
        };
        ToolOutput::text(format!(
            "Base directory for this skill: {}\n\n{}",
            skill.dir.display(),
            skill.body.trim()
        ))
        .with_raw(json!({
            "success": true,
            "commandName": skill.name,
            "path": skill.dir.display().to_string(),
        }))
    }
}

impl Tool for SkillTool {
    fn name(&self) -> &str {
        SKILL_TOOL_NAME
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill": {"type": "string", "description": "The name of the skill to load"}
            },
            "required": ["skill"],
            "additionalProperties": false
        })
    }

    fn is_read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, input: Value, _ctx: &'a ToolContext) -> BoxFuture<'a, ToolOutput> {
        Box::pin(async move { self.run(&input) })
    }
}
