package embedded

import (
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// fatalOnly is the members' logger: silent but for the errors after which
// etcd exits the process (a file it cannot open when the process is out
// of descriptors, for one), which it writes to stderr first. zap's Nop
// logger exits on them too, without a word.
func fatalOnly() *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(os.Stderr), zapcore.DPanicLevel))
}
