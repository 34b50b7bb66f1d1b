package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/relayd/relayd/internal/ws"
)

// settingsCommand is the admin `settings` command.
func (n *Node) settingsCommand() ws.Command {
	return ws.Command{Name: "settings", Usage: "settings [<name> [<value>]]",
		Help: "Show the node's settings, one of them, or set one (" + strings.Join(settingNames(), ", ") + ").", Run: n.cmdSettings}
}

func (n *Node) cmdSettings(_ context.Context, args string) ([]string, error) {
	fields := strings.Fields(args)
	cur := n.settings.get()
	line := func(d settingDef, s Settings) string { return fmt.Sprintf("%-17s %-22s %s", d.name, d.text(s), d.help) }
	switch len(fields) {
	case 0:
		out := make([]string, 0, len(settingDefs))
		for _, d := range settingDefs {
			out = append(out, line(d, cur))
		}
		return out, nil
	case 1, 2:
	default:
		return nil, &ws.UsageError{Reason: "settings takes a name and a value"}
	}
	d, ok := settingByName(fields[0])
	if !ok {
		return nil, &ws.UsageError{Reason: fmt.Sprintf("Setting %q does not exist (%s)", fields[0], strings.Join(settingNames(), ", "))}
	}
	if len(fields) == 1 {
		return []string{line(d, cur)}, nil
	}
	raw, err := d.parse(fields[1])
	if err != nil {
		return nil, &ws.UsageError{Reason: fmt.Sprintf("%s %s", d.name, err)}
	}
	next, err := n.settings.update(map[string]json.RawMessage{d.name: raw})
	var se settingError
	if errors.As(err, &se) {
		return nil, &ws.UsageError{Reason: se.msg}
	}
	if err != nil {
		return nil, err
	}
	if d.name == "strategy" {
		return []string{"Strategy is now " + d.text(next)}, nil
	}
	return []string{fmt.Sprintf("You have set your %q settings to %q.", d.name, d.text(next))}, nil
}
