package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flashsale/flashsale/internal/harness/scenario"
)

// LifeColumns are the headers of a sale with payments' second table
// (--pay-within): what became of each row's orders after the click.
// paid, pending, expired: units by where their orders stand (the shop's
// audit); returned: units put back on sale, those of the orders that
// ended (expired or cancelled: each returned by the transaction that
// ended it), or the shops' count of returns where it is more (a unit
// returned twice; the shops' counts alone die with a killed shop);
// resold: units sold
// again after they came back; undersold: units neither sold nor back on
// sale once the sale ended; pay_ok, pay_late: the payers' 200s and 409s.
var LifeColumns = []string{"strategy", "paid", "pending", "expired", "returned", "resold", "undersold", "pay_ok", "pay_late"}

// LifeRows returns the rows of the strategies whose product had a pay window,
// in LifeColumns order; nil if none had (a run without --pay-within,
// whose output then has no second table).
func LifeRows(o *scenario.Outcome) [][]string {
	var rows [][]string
	for _, m := range o.Strategies {
		l := m.Audit.Life
		if l == nil {
			continue
		}
		okPay, late := "-", "-"
		if p := m.Payments; p != nil {
			okPay, late = strconv.Itoa(p.Paid), strconv.Itoa(p.Expired)
		}
		rows = append(rows, []string{
			string(m.Strategy), strconv.Itoa(l.Paid), strconv.Itoa(l.Pending), strconv.Itoa(l.Expired),
			strconv.FormatInt(max(int64(l.Expired+l.Cancelled), m.Events.Returned), 10), strconv.Itoa(l.Resold), strconv.Itoa(l.Undersold),
			okPay, late,
		})
	}
	return rows
}

// writeLifeText writes the second table for a terminal, if the run has one.
func writeLifeText(b *strings.Builder, o *scenario.Outcome) {
	rows := LifeRows(o)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nafter the click (--pay-within):\n")
	writeAligned(b, LifeColumns, rows, false)
}

// writeLifeMarkdown writes the second table for report.md, if the run has one.
func writeLifeMarkdown(b *strings.Builder, o *scenario.Outcome) {
	rows := LifeRows(o)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\nAfter the click (a pay window): units paid, pending, expired, returned to sale, sold again, and neither sold nor on sale at the end; the payers' answers.\n\n")
	markdownTable(b, LifeColumns, rows)
}

// payFlags are a sale with payments' flags, as the settings line repeats
// them; "" without a pay window.
func payFlags(o *scenario.Outcome) string {
	s := o.Settings
	if !s.Paying() {
		return ""
	}
	line := fmt.Sprintf(" --pay-within %v --pay %g", s.PayWithin, s.Pay)
	if s.LatePay {
		line += " --late-pay"
	}
	if o.Flags["naive-expiry"] == "true" {
		line += " --naive-expiry"
	}
	if v := o.Flags["clock-ahead"]; v != "" && v != "0s" {
		line += " --clock-ahead " + v
	}
	return line
}
