//! `skill-host mcp` serves nothing swapped in after its listing
//! (docs/security.md): a flat skill file and a bundle's folder replaced by
//! symbolic links once the server has listed, read through the official
//! client, with `--no-watch` and with the watcher on (the reads then run
//! within its debounce window).

use serde_json::json;

use crate::common::{Sandbox, path, skill_host_bin};
use crate::mcp::{env, official_client};

const SECRET: &str = "OUTSIDE-SECRET";

#[test]
fn skill_host_mcp_serves_nothing_swapped_in_after_listing() {
    for watch in [&["--no-watch"][..], &[][..]] {
        let sandbox = Sandbox::new();
        let workspace = sandbox.path().join("workspace");
        std::fs::create_dir_all(workspace.join(".git")).unwrap();
        let skills = workspace.join(".agents/skills");
        sandbox.write_skill(&workspace, "bundle", "description: A bundle.\n", "Inside.");
        std::fs::write(skills.join("bundle/ref.md"), "inside reference\n").unwrap();
        std::fs::write(skills.join("flat.md"), "---\nname: flat\ndescription: A flat skill.\n---\n\nInside.\n")
            .unwrap();
        // Outside: a file the user can read, and a folder holding one and a
        // SKILL.md that is no skill (so no fresh listing serves it either).
        let outside = sandbox.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
        std::fs::write(outside.join("SKILL.md"), SECRET).unwrap();
        std::fs::write(outside.join("ref.md"), SECRET).unwrap();

        let bin = skill_host_bin();
        let mut command = vec![path(&bin), "mcp", "--cwd", path(&workspace)];
        command.extend_from_slice(watch);
        let plan = json!({
            "command": command,
            "env": env(&sandbox),
            "swap": [
                {"path": path(&skills.join("flat.md")), "target": path(&outside.join("secret.txt"))},
                {"path": path(&skills.join("bundle")), "target": path(&outside)},
            ],
            "calls": [{"name": "flat"}, {"name": "bundle"}],
            "skills_get": ["skill://flat/SKILL.md", "skill://bundle/SKILL.md"],
            "reads": ["skill://flat/SKILL.md", "skill://bundle/SKILL.md", "skill://bundle/ref.md",
                      "skill://bundle/secret.txt", "skill://flat/SKILL.md", "skill://bundle/ref.md"],
        });
        let transcript = official_client(&sandbox, &plan);
        // The listing was made before the swap.
        let description = transcript["tools"][0]["description"].as_str().unwrap();
        assert!(description.contains("- `flat`: A flat skill."), "{description}");
        let text = transcript.to_string();
        assert!(!text.contains(SECRET), "{watch:?}: the outside files were served: {text}");
        assert_eq!(transcript["reads"].as_array().unwrap().len(), 6);
    }
}
