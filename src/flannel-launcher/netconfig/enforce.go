package netconfig

import boshlog "github.com/cloudfoundry/bosh-utils/logger"

// Enforcement says whether Ensure may replace a different stored config. With On, it does so once per change
// of this node's desired config: Record keeps which one it last enforced. A node not yet updated during a roll
// that changes the config (its record names its desired config) then leaves the newer stored config alone,
// while an updated node, a rolled-back one and one without a record (new, recreated) enforce theirs.
type Enforcement struct {
	On     bool
	Record Record
}

// enforcedBefore tells whether this node's record names its desired config. A record that cannot be read
// names none: the node enforces, as one without a record does, and says why.
func (e Enforcement) enforcedBefore(key string, desired []byte, logger boshlog.Logger) bool {
	holds, err := e.Record.Holds(key, desired)
	if err != nil {
		logger.Warn(logTag, "%s: taken as no record, so this node replaces a different stored config with its desired one", err)
	}
	return holds
}

// remember makes the record name the desired config, now stored, unless it does already. A record that
// cannot be written is logged, not fatal: the network config is right, and the next start enforces again.
func (e Enforcement) remember(key string, desired []byte, logger boshlog.Logger) {
	if !e.On {
		return
	}
	if holds, err := e.Record.Holds(key, desired); err == nil && holds {
		return
	}
	if err := e.Record.Save(key, desired); err != nil {
		logger.Error(logTag, "%s: the next start of this node will replace a different stored config again, even one "+
			"that a newer deploy wrote", err)
	}
}

// forget removes the record when enforce is off.
func (e Enforcement) forget(logger boshlog.Logger) {
	if e.Record.Path == "" {
		return
	}
	if err := e.Record.Remove(); err != nil {
		logger.Warn(logTag, "%s: turning network.enforce on later may leave a different stored config alone on this node", err)
	}
}
