package catalog

import (
	"fmt"
	"os"
	"strings"
)

// LoadAdmin reads only the admin block of the config file at path, for the
// commands that talk to a running pgaccel through its admin port (status,
// refresh). Problems elsewhere in the file, such as an origin.dsn whose
// ${env:NAME} is not set in this shell, do not matter to them and are not
// reported; a YAML syntax error and problems of admin.* are, as a
// *ValidationError. Load checks the whole file.
func LoadAdmin(path string) (Admin, error) {
	cfg, problems, err := loadLenient(path)
	if err != nil {
		return Admin{}, err
	}
	var mine []Problem
	for _, p := range problems {
		if isAdminKey(p.Key) {
			mine = append(mine, p)
		}
	}
	if len(mine) == 0 {
		for _, p := range cfg.problems() {
			if isAdminKey(p.Key) {
				mine = append(mine, p)
			}
		}
	}
	if len(mine) > 0 {
		return Admin{}, newValidationError(path, mine)
	}
	return cfg.Admin, nil
}

// isAdminKey reports whether a problem's key is the admin block or in it.
func isAdminKey(key string) bool {
	return key == "admin" || strings.HasPrefix(key, "admin.")
}

// LoadServerListen reads server.listen of the config file at path (its
// default when unset), for the commands that connect to a running
// pgaccel as a client (explain); like LoadAdmin, problems elsewhere in the
// file do not matter.
func LoadServerListen(path string) (string, error) {
	cfg, _, err := loadLenient(path)
	if err != nil {
		return "", err
	}
	return cfg.Server.Listen, nil
}

// loadLenient reads and decodes the config file at path with defaults
// applied, without validating it: the client commands read one block of
// it. problems are the decoding's; only a file that cannot be read or
// parsed at all is an error.
func loadLenient(path string) (*Config, []Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read config: %w", err)
	}
	raw, problems := decode(data, os.LookupEnv)
	if raw == nil {
		return nil, nil, newValidationError(path, problems)
	}
	raw.applyDefaults()
	return raw.config(path), problems, nil
}
