package progress

import (
	"time"

	"pipectl.dev/pipectl/components/record"
)

// PublishInterval is how often at most the series of a running gang is
// handed on (each is a write of the step's record).
const PublishInterval = 5 * time.Second

// Publisher hands the series of a gang's Tracker on as both backends
// write it to the step's record: while the gang runs, when it changed and
// at most every PublishInterval, its points thinned to LivePoints; when
// the gang ended, the whole series (at most MaxPoints points).
type Publisher struct {
	Tracker *Tracker
	Publish func(record.Progress)
	pushed  time.Time
}

// Live hands the series on when it changed and PublishInterval passed
// since it last was.
func (p *Publisher) Live() {
	if p.Publish == nil || time.Since(p.pushed) < PublishInterval {
		return
	}
	if s, changed := p.Tracker.Progress(true); changed {
		s.Points = Thin(s.Points, LivePoints)
		p.Publish(s)
		p.pushed = time.Now()
	}
}

// End hands the whole series on, when any metric line was read.
func (p *Publisher) End() {
	if p.Publish == nil {
		return
	}
	if s, changed := p.Tracker.Progress(true); changed || s.Lines > 0 {
		p.Publish(s)
		p.pushed = time.Now()
	}
}
