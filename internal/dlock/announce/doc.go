// Package announce hears the release announcements of package dlock's
// locks: a lock's release publishes its id on its key's channel
// (Channel), on every node it was held on, and a Subscriber keeps one
// pub/sub connection per node, subscribed to the channels of the keys its
// locker waits for, so that a waiting process wakes at a release instead
// of polling. It tells its user when a node has confirmed a subscription
// (what was published before was not heard) and when a connection dropped
// (what was published meanwhile may be lost); what to do then is the
// waiting room's to decide.
package announce
