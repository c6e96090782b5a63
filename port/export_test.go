package port

import "os"

// SetSpool makes p read a restore's snapshot into the files spool makes,
// so that a test can give it one that cannot be written.
func SetSpool(p *Port, spool func() (*os.File, error)) { p.spool = spool }
