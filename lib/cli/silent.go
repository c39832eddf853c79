package cli

// Silent is an outcome the command has already reported in full (doctor's
// report with a failed check): Report prints nothing more, so --json keeps
// one document on stdout, and the process exits with Code.
type Silent struct{ Code int }

func (s Silent) Error() string { return "already reported" }
