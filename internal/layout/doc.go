// Package layout holds no code: its test checks the import rules that the package comments of
// relayd state (which relayd packages each may import, which are pure, and that nothing but the
// relayd command imports the node), from the imports `go list` reports.
package layout
